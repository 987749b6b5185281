"""Issue 54: a target that is down says why. A real Prometheus scrapes four targets on
loopback — one that answers metrics, a port nothing listens on, a program that answers 404
on its port (another process holding it), one that holds the connection past the scrape
timeout, a listener that accepts every connection and resets it — and target_down's
scrape-error checks tell the four failures apart from the errors Prometheus itself wrote,
quoting them."""

from __future__ import annotations

import asyncio
import socket
import struct
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import free_port
from reasoning_core.models import Evidence
from reasoning_core.runbooks import load_runbooks
from reasoning_core.runbooks.kinds import Bound, kind_of
from reasoning_core.runbooks.timewindow import TimeWindow
from reasoning_core.runbooks.verdicts import evaluate
from reasoning_core.tools.base import ToolRequest
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.tools.scrape_targets import ScrapeTargetsTool, error_kind

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

RUNBOOK = load_runbooks().runbooks["target_down"]
CHECKS = {c.id: c for c in RUNBOOK.checks}
NOW = datetime.now(UTC)
WINDOW = TimeWindow(
    recent_start=NOW - timedelta(minutes=3),
    recent_end=NOW + timedelta(minutes=1),
    baseline_start=NOW - timedelta(hours=1),
    baseline_end=NOW - timedelta(minutes=3),
    source="default",
)


@dataclass(frozen=True)
class Jobs:
    prometheus: PrometheusTool
    ports: dict[str, int]


async def _metrics(_: web.Request) -> web.Response:
    return web.Response(text="app_up 1\n", content_type="text/plain")


async def _maintenance_page(_: web.Request) -> web.Response:
    return web.Response(status=404, text="<html>down for maintenance</html>")


async def _hangs(_: web.Request) -> web.Response:
    await asyncio.sleep(5)
    return web.Response(text="app_up 1\n", content_type="text/plain")


async def _serve(
    handler: Callable[[web.Request], Awaitable[web.Response]], port: int
) -> web.AppRunner:
    app = web.Application()
    app.router.add_get("/metrics", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


async def _resets(port: int) -> asyncio.Server:
    """A stray listener: accepts each connection and resets it at once (SO_LINGER 0)."""

    async def cut(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = writer.get_extra_info("socket")
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()

    return await asyncio.start_server(cut, "127.0.0.1", port)


def _config(ports: dict[str, int]) -> str:
    jobs = "".join(
        f"  - job_name: {job}\n    static_configs: [{{targets: ['127.0.0.1:{port}']}}]\n"
        for job, port in ports.items()
    )
    return (
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "  evaluation_interval: 1m\nscrape_configs:\n" + jobs
    )


@pytest.fixture(scope="module")
async def jobs() -> AsyncIterator[Jobs]:
    ports = {name: free_port() for name in ("fine", "gone", "taken", "hung", "reset")}
    stray = await _resets(ports["reset"])
    runners = [
        await _serve(_metrics, ports["fine"]),
        await _serve(_maintenance_page, ports["taken"]),
        await _serve(_hangs, ports["hung"]),
    ]
    try:
        with tempfile.TemporaryDirectory(prefix="whytree-scrape-") as tsdb:
            async with LocalPrometheus(Path(tsdb), config=_config(ports)) as prometheus:
                tool = PrometheusTool(prometheus.url)
                for _ in range(100):  # at most ~20 s: every target scraped (and failed) once
                    targets = await tool.active_targets()
                    scraped = [t for t in targets if t.get("health") != "unknown"]
                    if len(scraped) == len(ports):
                        break
                    await asyncio.sleep(0.2)
                yield Jobs(tool, ports)
    finally:
        stray.close()
        for runner in runners:
            await runner.cleanup()


async def _targets(jobs: Jobs, job: str) -> list[dict[str, object]]:
    result = await ScrapeTargetsTool(jobs.prometheus).run(ToolRequest(query=job))
    assert result.ok, result.error
    return result.rows


async def _verdict(jobs: Jobs, check_id: str, job: str) -> Evidence:
    check = CHECKS[check_id]
    kind = kind_of(check.tool)
    bound = Bound(values={"job": job}, window=WINDOW, anchor=NOW, max_rows=50)
    result = await ScrapeTargetsTool(jobs.prometheus).run(kind.request(check, bound))
    return evaluate(check.verdict, kind.rows(result), WINDOW, params={"job": job})


async def test_the_tool_names_each_way_a_scrape_fails(jobs: Jobs) -> None:
    fine, gone, taken, hung = [
        (await _targets(jobs, job))[0] for job in ("fine", "gone", "taken", "hung")
    ]
    assert (fine["health"], fine["error_kind"]) == ("up", "")
    assert (gone["health"], gone["error_kind"]) == ("down", "refused")
    assert "connection refused" in str(gone["error"])
    assert (taken["error_kind"], taken["http_status"]) == ("http_status", 404)
    assert hung["error_kind"] == "timeout"
    assert await _targets(jobs, "nobody") == []


async def test_another_program_on_the_port_is_told_from_a_dead_process(jobs: Jobs) -> None:
    answered = await _verdict(jobs, "scrape_not_metrics", "taken")
    assert answered.confirmed is True and answered.confidence >= 0.8
    assert "404 Not Found" in answered.text and "not with metrics" in answered.text
    assert (await _verdict(jobs, "scrape_refused", "taken")).confirmed is False
    refused = await _verdict(jobs, "scrape_refused", "gone")
    assert refused.confirmed is True and "nothing listens" in refused.text
    assert (await _verdict(jobs, "scrape_not_metrics", "gone")).confirmed is False
    hung = await _verdict(jobs, "scrape_timed_out", "hung")
    assert hung.confirmed is True and "in time" in hung.text


async def test_a_connection_accepted_and_cut_is_something_on_the_port_not_a_dead_process(
    jobs: Jobs,
) -> None:
    [reset] = await _targets(jobs, "reset")
    assert reset["error_kind"] == "reset", reset
    cut = await _verdict(jobs, "scrape_reset", "reset")
    assert cut.confirmed is True and "cut before the answer ends" in cut.text, cut.text
    assert (await _verdict(jobs, "scrape_refused", "reset")).confirmed is False
    assert (await _verdict(jobs, "scrape_reset", "gone")).confirmed is False
    hypotheses = {h.id: h for h in RUNBOOK.hypotheses}
    assert "scrape_reset" in hypotheses["process_down"].against
    assert {link.id for link in RUNBOOK.links if "scrape_reset" in str(link.after)} == {
        "port_taken_reset"
    }


async def test_a_job_that_scrapes_or_is_unknown_decides_nothing(jobs: Jobs) -> None:
    fine = await _verdict(jobs, "scrape_refused", "fine")
    assert fine.confirmed is None and "scrapes now" in fine.text
    unknown = await _verdict(jobs, "scrape_refused", "nobody")
    assert unknown.confirmed is None and "no target of job nobody" in unknown.text


def test_an_error_it_does_not_know_is_other_and_quoted_as_it_is() -> None:
    assert error_kind("") == ""
    assert (
        error_kind('Get "http://x/metrics": dial tcp 127.0.0.1:1: connect: connection refused')
        == "refused"
    )
    assert error_kind("server returned HTTP status 503 Service Unavailable") == "http_status"
    assert error_kind('expected a valid start token, got "<" ("INVALID")') == "not_metrics"
    assert error_kind("something nobody has seen") == "other"


async def test_prometheus_gone_is_a_failed_check_not_an_exception() -> None:
    tool = ScrapeTargetsTool(PrometheusTool(f"http://127.0.0.1:{free_port()}", timeout_sec=2))
    result = await tool.run(ToolRequest(query="web"))
    assert not result.ok and result.error_kind == "unavailable"
    assert "could not be reached" in (result.error or "")
