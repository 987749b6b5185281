"""The monitoring system is not a candidate: Prometheus scraping itself (its own work grows
with every incident's queries, whytree's included) and every target's language runtime (Go's
garbage collector moves with any load) are left out of the scan, while the service's own
series that changed is named — over series turned into TSDB blocks by promtool and served
by a real Prometheus. On the live lab with the runbooks off, Prometheus' own `go_gc_*` and
`prometheus_*` series were ranked first; with the scan at the lab's 5 s scrape, the
lab's start-up still ramping `node_load5` was."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from reasoning_core.changes.scan import read_targets, scan
from reasoning_core.tools.prometheus import PrometheusTool

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

START = datetime(2026, 11, 28, 3, 0, tzinfo=UTC)
#: Everything that moves, moves here; the symptom is seen a minute later.
STEP_AT = START + timedelta(minutes=20)
ONSET = STEP_AT + timedelta(minutes=1)
AT = ONSET + timedelta(minutes=2)
PROMETHEUS = 'instance="127.0.0.1:9090",job="prometheus"'
WEB = 'instance="127.0.0.1:8080",job="web"'


def _samples(before: float, after: float) -> Iterator[tuple[int, float]]:
    at = START
    while at <= AT + timedelta(minutes=1):
        yield int(at.timestamp()), before if at < STEP_AT else after
        at += timedelta(seconds=15)


def _gauge(name: str, labels: str, before: float, after: float) -> list[str]:
    return [f"# TYPE {name} gauge", *(f"{name}{{{labels}}} {v} {t}"
                                      for t, v in _samples(before, after))]  # fmt: skip


def _recording() -> str:
    lines = ["# TYPE up gauge"]
    for labels in (PROMETHEUS, WEB):
        lines += [f"up{{{labels}}} 1 {t}" for t, _ in _samples(1, 1)]
    lines += _gauge("prometheus_build_info", f'{PROMETHEUS},version="2.45.3"', 1, 1)
    # Prometheus itself busier, by far the strongest changes: never candidates
    lines += _gauge("prometheus_engine_queries", PROMETHEUS, 0, 40)
    lines += _gauge("process_resident_memory_bytes", PROMETHEUS, 1e8, 9e8)
    # the service's runtime garbage collector, stronger than its own series: left out
    lines += _gauge("go_goroutines", WEB, 10, 900)
    lines += _gauge("python_gc_objects_collected", WEB, 10, 900)
    # the kernel's smoothed load averages: node_load1 ramped, late and blurred
    lines += _gauge("node_load5", WEB, 0.1, 5.0)
    lines += _gauge("node_load15", WEB, 0.1, 3.0)
    # what the service itself did: named
    lines += _gauge("web_inflight_requests", WEB, 5, 60)
    return "\n".join([*lines, "# EOF"]) + "\n"


async def test_the_monitoring_system_and_runtimes_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "series.om").write_text(_recording())
    build_tsdb(tmp_path / "series.om", tmp_path / "tsdb")
    async with LocalPrometheus(tmp_path / "tsdb") as server:
        tool = PrometheusTool(server.url)
        targets = await read_targets(tool, at=AT)
        result = await scan(tool, targets, {"job": "web"}, at=AT, symptom_onset=ONSET)
    assert [t.job for t in targets] == ["web"]  # Prometheus scraping itself is not a target
    assert [c.component for c in result.components] == ["web"], result.describe("en")
    assert [s.name for s in result.components[0].series] == ["web_inflight_requests"]
    assert result.series_seen == 2  # up and the service's own series: nothing else was read
