"""The question bench starts each window on a quiet host (lab/bench.py `settle_host`): the
lab's start-up or the previous window's load is out of the minute the rules read before a
question is asked. Prometheus is served over real HTTP, answering what a busy and then a
quiet host would."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from lab.bench import host_busy, settle_host

Served = tuple[TestServer, list[str]]


async def _prometheus(busy: list[float]) -> Served:
    """A Prometheus whose host-busy query answers `busy` one value per query (the last
    one from then on); no value at all when the list is empty."""
    asked: list[str] = []

    async def query(request: web.Request) -> web.Response:
        asked.append(request.query["query"])
        if not busy:
            return web.json_response({"status": "success", "data": {"result": []}})
        value = busy.pop(0) if len(busy) > 1 else busy[0]
        return web.json_response(
            {"status": "success", "data": {"result": [{"metric": {}, "value": [0, str(value)]}]}}
        )

    app = web.Application()
    app.router.add_get("/api/v1/query", query)
    server = TestServer(app)
    await server.start_server()
    return server, asked


def _url(server: TestServer) -> str:
    return str(server.make_url("")).rstrip("/")


@pytest.fixture
async def busy_then_quiet() -> AsyncIterator[Served]:
    served = await _prometheus([0.91, 0.74, 0.2])
    yield served
    await served[0].close()


async def test_the_host_busy_share_is_read_from_prometheus(busy_then_quiet: Served) -> None:
    server, asked = busy_then_quiet
    assert await host_busy(_url(server)) == pytest.approx(0.91)
    assert "node_cpu_seconds_total" in asked[0]


async def test_settling_waits_until_the_host_is_quiet(busy_then_quiet: Served) -> None:
    server, asked = busy_then_quiet
    await settle_host(_url(server), limit=60.0, every=0.05)
    assert len(asked) == 3  # busy, busy, then quiet: no more asked
    assert await host_busy(_url(server)) == pytest.approx(0.2)


async def test_settling_is_bounded_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    server, _ = await _prometheus([0.95])
    try:
        started = time.monotonic()
        await settle_host(_url(server), limit=0.0)
        assert time.monotonic() - started < 30  # one look, no waiting past the bound
        assert "still 95 % busy" in caplog.text
    finally:
        await server.close()


async def test_no_answer_or_no_series_is_no_reason_to_wait() -> None:
    server, asked = await _prometheus([])
    try:
        assert await host_busy(_url(server)) is None
        await settle_host(_url(server), limit=60.0)
        assert len(asked) == 2  # the look above, and settling's one: no waiting
    finally:
        await server.close()
    assert await host_busy("http://127.0.0.1:9") is None
