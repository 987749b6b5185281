"""http_check against a local aiohttp service: status, latency, timeouts, the allow-list."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from aiohttp import web

from reasoning_core.tools import Tool, ToolRequest
from reasoning_core.tools.http_check import HostAllowList, HttpCheckTool

#: How long /slow takes to answer; a 0.2 s timeout cuts it (the fixture's shutdown cancels it).
SLOW_SEC = 10.0


@dataclass
class Service:
    base_url: str
    hits: list[str] = field(default_factory=list)


@pytest.fixture
async def service() -> AsyncIterator[Service]:
    svc = Service("")

    async def handle(request: web.Request) -> web.StreamResponse:
        svc.hits.append(f"{request.method} {request.path}")
        if request.path == "/slow":
            await asyncio.sleep(SLOW_SEC)
        if request.path == "/fail":
            return web.Response(status=500, text="boom")
        if request.path == "/moved":
            raise web.HTTPFound("http://evil.example.com/steal")
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    svc.base_url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    yield svc
    await runner.cleanup()


async def test_ok_status_with_latency(service: Service) -> None:
    tool: Tool = HttpCheckTool(["127.0.0.1"])
    result = await tool.run(ToolRequest(url=service.base_url + "/health"))
    assert result.ok
    assert result.tool == "http_check"
    assert result.data["status"] == 200
    assert result.data["ok"] is True
    assert result.data["latency_ms"] > 0  # measured (how much depends on the machine)
    assert result.rows == [result.data]
    head = await tool.run(ToolRequest(url=service.base_url + "/health", method="HEAD"))
    assert head.data["status"] == 200
    assert service.hits == ["GET /health", "HEAD /health"]


async def test_server_error_is_reported_not_raised(service: Service) -> None:
    result = await HttpCheckTool(["127.0.0.1"]).run(ToolRequest(url=service.base_url + "/fail"))
    assert result.ok  # the check ran; the service is what failed
    assert result.data["status"] == 500
    assert result.data["ok"] is False


async def test_timeout_is_bounded(service: Service) -> None:
    tool = HttpCheckTool(["127.0.0.1"], timeout_sec=0.2)
    result = await tool.run(ToolRequest(url=service.base_url + "/slow"))
    assert not result.ok
    assert result.error_kind == "timeout"
    assert result.error == f"{service.base_url}/slow did not answer within 0.2 s"
    assert result.data["status"] is None
    assert result.elapsed_ms < SLOW_SEC * 1000 / 2  # cut: well before the answer would come


async def test_host_outside_the_allow_list_is_refused_without_a_request(service: Service) -> None:
    tool = HttpCheckTool(["127.0.0.1"])
    other = service.base_url.replace("127.0.0.1", "localhost")
    result = await tool.run(ToolRequest(url=other + "/health"))
    assert not result.ok
    assert result.error_kind == "refused"
    assert result.error == "refused: host 'localhost' is not in the allow-list (TOOLS_HTTP_ALLOW)"
    nothing_allowed = await HttpCheckTool([]).run(ToolRequest(url=service.base_url + "/x"))
    assert nothing_allowed.error_kind == "refused"
    assert service.hits == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://127.0.0.1/file", "only probes http(s) URLs"),
        ("http://user:secret@127.0.0.1/", "does not send credentials"),
        (None, "needs a url"),
    ],
)
async def test_other_refusals(url: str | None, reason: str) -> None:
    result = await HttpCheckTool(["127.0.0.1"]).run(ToolRequest(url=url))
    assert result.error_kind == "refused"
    assert result.error is not None
    assert reason in result.error
    assert "secret" not in result.error


async def test_redirects_are_not_followed(service: Service) -> None:
    result = await HttpCheckTool(["127.0.0.1"]).run(ToolRequest(url=service.base_url + "/moved"))
    assert result.data["status"] == 302
    assert result.data["location"] == "http://evil.example.com/steal"
    assert service.hits == ["GET /moved"]


async def test_connection_refused_is_unavailable() -> None:
    async with asyncio.timeout(5):
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
    result = await HttpCheckTool(["127.0.0.1"]).run(ToolRequest(url=f"http://127.0.0.1:{port}/"))
    assert result.error_kind == "unavailable"


def test_allow_list_matching() -> None:
    allow = HostAllowList.parse(".example.internal, api.example.com *.svc.local")
    assert allow.allows("billing.example.internal")
    assert allow.allows("example.internal")
    assert allow.allows("API.Example.com.")
    assert allow.allows("a.b.svc.local")
    assert not allow.allows("badexample.internal")
    assert not allow.allows("example.internal.evil.com")
    assert not allow.allows("www.example.com")
    assert not allow.allows("127.0.0.1")
    assert not allow.allows("localhost")
    assert not HostAllowList.parse("")
