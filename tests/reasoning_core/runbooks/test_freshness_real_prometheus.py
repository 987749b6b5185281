"""Issue 37: a series that stopped is never read as the present. A real Prometheus over
promtool blocks in the shape postgres_exporter and Prometheus write them: the target's
`up` and `scrape_duration_seconds` every scrape (0 and the timeout once the exporter's
scrape times out), the exporter's series until the freeze and none after. Ages come
from Prometheus's own sample times, never the local clock."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from reasoning_core.models import Evidence
from reasoning_core.planners.runbook.checks import PlanState
from reasoning_core.planners.runbook.stale import stale_evidence, stopped_series
from reasoning_core.runbooks import load_runbooks
from reasoning_core.runbooks.timewindow import TimeWindow
from reasoning_core.tools.prometheus import PrometheusTool

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

START = 1_764_300_000  # the recording's first second (Unix)
FREEZE = START + 600  # postgres_exporter's scrapes time out from here on
END = START + 900
GAP = (START + 300, START + 360)  # a minute the slow target's series miss inside the window


def _series(out: list[str], name: str, labels: str, points: list[tuple[int, float]]) -> None:
    out.append(f"# TYPE {name} gauge")
    out.extend(f"{name}{{{labels}}} {v} {t}" for t, v in points)


def _openmetrics() -> str:
    pg = 'instance="127.0.0.1:9187",job="postgres"'
    slow = 'instance="127.0.0.1:9999",job="slowpg"'  # an unusual 20 s interval
    lines: list[str] = []
    every5 = range(START, END + 1, 5)
    _series(lines, "up", pg, [(t, 1.0 if t < FREEZE else 0.0) for t in every5])
    lines.pop(-1 - len(every5))  # one family per metric name: written below for both jobs
    every20 = range(START, END + 1, 20)
    lines.extend(f"up{{{slow}}} 1.0 {t}" for t in every20)
    _series(lines, "scrape_duration_seconds", pg,
            [(t, 0.02 if t < FREEZE else 4.0) for t in every5])  # fmt: skip
    lines.pop(-1 - len(every5))
    lines.extend(f"scrape_duration_seconds{{{slow}}} 0.03 {t}" for t in every20)
    _series(lines, "pg_stat_activity_count", pg + ',state="active"',
            [(t, 1.0) for t in every5 if t < FREEZE])  # fmt: skip
    lines.extend(
        f'pg_stat_activity_count{{{slow},state="active"}} 2.0 {t}'
        for t in every20
        if not GAP[0] <= t < GAP[1]
    )
    lines.insert(0, "# TYPE up gauge")
    lines.insert(len(every5) + len(every20) + 1, "# TYPE scrape_duration_seconds gauge")
    return "\n".join(lines) + "\n# EOF\n"


@pytest.fixture(scope="module")
async def prometheus() -> AsyncIterator[PrometheusTool]:
    scratch = Path(tempfile.mkdtemp(prefix="whytree-fresh-"))
    try:
        (scratch / "series.om").write_text(_openmetrics())
        build_tsdb(scratch / "series.om", scratch / "tsdb")
        async with LocalPrometheus(scratch / "tsdb") as prom:
            yield PrometheusTool(prom.url)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _state(at: int) -> PlanState:
    moment = datetime.fromtimestamp(at, UTC)
    window = TimeWindow(
        recent_start=moment - timedelta(minutes=3), recent_end=moment,
        baseline_start=moment - timedelta(hours=1), baseline_end=moment - timedelta(minutes=3),
        source="default",
    )  # fmt: skip
    return PlanState(runbook="endpoint_probe", language="en", params={}, anchor=moment,
                     window=window)  # fmt: skip


async def test_a_frozen_exporters_series_are_stopped_not_idle(
    prometheus: PrometheusTool,
) -> None:
    runbook = load_runbooks().get("endpoint_probe")
    assert runbook is not None
    check = runbook.check("pg_idle")
    tools = {"prometheus": prometheus}
    assert await stopped_series(check, runbook, _state(FREEZE - 30), tools) is None
    gone = await stopped_series(check, runbook, _state(FREEZE + 90), tools)
    assert gone is not None and (gone.job, gone.why) == ("postgres", "timeout")
    assert gone.last == pytest.approx(FREEZE - 5)
    idle = Evidence(confirmed=True, confidence=0.9, text="busy sessions 1.0", has_data=True)
    said = stale_evidence(idle, gone, "en")
    assert said.confirmed is None and said.data["stale"]["was"] == "busy sessions 1.0"
    moment = datetime.fromtimestamp(FREEZE - 5, UTC).strftime("%H:%M:%S")
    assert said.text.startswith(f"no sample from postgres (127.0.0.1:9187) since {moment}")
    assert "its scrape times out" in said.text
    assert "не укладывается в таймаут" in gone.text("ru")


async def test_a_gap_inside_the_window_and_a_slow_interval_are_not_a_stop(
    prometheus: PrometheusTool,
) -> None:
    """The 20 s target misses a minute inside the window and is seen again: not a stop;
    nor is one missed 5 s scrape of the other (two of its own intervals are)."""
    runbook = load_runbooks().get("endpoint_probe")
    assert runbook is not None
    check = runbook.check("pg_idle")
    tools = {"prometheus": prometheus}
    gone = await stopped_series(check, runbook, _state(GAP[1] + 100), tools)
    assert gone is None
    assert await stopped_series(check, runbook, _state(FREEZE + 8), tools) is None
    # A check reading no mapped metric (a literal process-exporter name) is not asked.
    assert await stopped_series(runbook.check("db_proxy_on_path"), runbook,
                                _state(FREEZE + 90), tools) is None  # fmt: skip
