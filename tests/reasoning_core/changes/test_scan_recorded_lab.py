"""The change scan over what the lab's real exporters published while real faults ran
(tests/data/lab/lab-all.om.gz, replayed by a real Prometheus; see
tests/bot/test_questions_recorded_lab.py): quiet on the nothing-wrong window, the fault's
component first where the data shows it first, never a candidate without a changed series.

Measured over the recording's eight faulty windows (the symptom's onset taken as the fault's
start, the scan read 75 s later): the fault's component first in 6 of 8 (cpu-hog,
disk-full, web-killed, pg-connections, pg-lock, bad-release's "web /checkout"; stop 45: 3 of
8); memory-leak names the node's OOM counter, slow-db the route whose traffic stopped. The
recording runs faults two minutes apart, so an earlier fault's effect falls into the next
one's window: a change still going on outweighs one that ended.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from demo.services import LocalPrometheus, unavailable_reason
from reasoning_core.changes.scan import ScanLimits, ScanResult, read_targets, scan
from reasoning_core.changes.scanner import CANDIDATE_CONFIDENCE, ChangeScanner, candidates_answer
from reasoning_core.tools.prometheus import PrometheusTool

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

READ_AFTER = timedelta(seconds=75)


@pytest.fixture
async def prometheus(
    lab_recording: tuple[Path, dict[str, datetime]],
) -> AsyncIterator[tuple[PrometheusTool, dict[str, datetime]]]:
    tsdb, starts = lab_recording
    async with LocalPrometheus(tsdb) as server:
        yield PrometheusTool(server.url, max_series=5000, max_samples=1_000_000), starts


async def _scan(tool: PrometheusTool, start: datetime, **subject: str) -> ScanResult:
    at = start + READ_AFTER
    targets = await read_targets(tool, at=at)
    return await scan(tool, targets, subject or {"job": "web"}, at=at, symptom_onset=start)


async def test_quiet_when_nothing_is_wrong(
    prometheus: tuple[PrometheusTool, dict[str, datetime]],
) -> None:
    tool, starts = prometheus
    result = await _scan(tool, starts["nothing-wrong"])
    assert result.components == []
    assert not result.partial
    assert len(result.targets) == 6 and result.series_seen > 150
    assert result.describe("en") == (
        f"looked at {result.series_seen} series of 6 targets; none changed before the symptom"
    )


@pytest.mark.parametrize(
    ("fault", "component", "series", "moved"),
    [
        ("cpu-hog", "web", "namedprocess_namegroup_cpu_seconds_total", "rose"),
        # free space gone is as far as a series can fall: first, before what merely moved
        ("disk-full", "disk", "node_filesystem_avail_bytes", "fell"),
        ("pg-connections", "postgres", "pg_stat_activity_count", "rose"),
        ("pg-lock", "postgres", "namedprocess_namegroup_cpu_seconds_total", "rose"),
    ],
)
async def test_the_faults_component_first(
    prometheus: tuple[PrometheusTool, dict[str, datetime]],
    fault: str,
    component: str,
    series: str,
    moved: str,
) -> None:
    tool, starts = prometheus
    result = await _scan(tool, starts[fault])
    first = result.components[0]
    assert first.component == component
    assert first.series[0].name == series
    assert first.series[0].change.direction == ("up" if moved == "rose" else "down")
    assert starts[fault] - timedelta(seconds=150) <= first.onset <= starts[fault] + READ_AFTER
    assert result.describe("en").startswith(f"what changed first: {component} ({series} {moved}")


async def test_every_candidate_has_a_changed_series(
    prometheus: tuple[PrometheusTool, dict[str, datetime]],
) -> None:
    tool, starts = prometheus
    for fault in ("disk-full", "slow-db", "bad-release"):
        result = await _scan(tool, starts[fault])
        assert result.components, fault
        for component in result.components:
            assert component.series and all(s.change.score >= 6 for s in component.series)


async def test_bounds_say_what_they_left_out(
    prometheus: tuple[PrometheusTool, dict[str, datetime]],
) -> None:
    tool, starts = prometheus
    at = starts["cpu-hog"] + READ_AFTER
    targets = await read_targets(tool, at=at)
    result = await scan(
        tool, targets, {"job": "web"}, at=at, limits=ScanLimits(max_series=10, max_queries=2)
    )
    assert len(result.targets) == 2 and result.series_seen == 10
    assert "4 targets on the host left out (the query limit)" in result.partial
    assert "only the first 10 series scored" in result.partial
    assert "(partial: " in result.describe("en")


async def test_an_unknown_subject_scans_nothing(
    prometheus: tuple[PrometheusTool, dict[str, datetime]],
) -> None:
    tool, starts = prometheus
    result = await _scan(tool, starts["cpu-hog"], job='web"} or vector(1) or {a="')
    assert result.targets == [] and result.components == [] and result.series_seen == 0


async def test_the_scanner_answers_candidates_below_established(
    prometheus: tuple[PrometheusTool, dict[str, datetime]],
) -> None:
    tool, starts = prometheus
    at = starts["pg-connections"] + READ_AFTER
    scanner = ChangeScanner(tool, clock=lambda: at)
    found = await scanner.scan(
        {"job": "postgres", "instance": "postgres"}, symptom_onset=starts["pg-connections"]
    )
    assert found is not None and found.components[0].component == "postgres"
    english = candidates_answer(found, "en")
    russian = candidates_answer(found, "ru")
    assert english.confidence == CANDIDATE_CONFIDENCE < 0.5
    assert english.text.startswith("what changed first: postgres (pg_stat_activity_count rose")
    assert russian.text.startswith("что изменилось первым: postgres (pg_stat_activity_count вырос")
    assert "просмотрено рядов" in russian.text
    assert await scanner.scan({"job": "no-such-job"}) is None


async def test_a_quiet_scan_is_no_candidate(
    prometheus: tuple[PrometheusTool, dict[str, datetime]],
) -> None:
    tool, starts = prometheus
    at = starts["nothing-wrong"] + READ_AFTER
    found = await ChangeScanner(tool, clock=lambda: at).scan({"job": "web"})
    assert found is not None
    answer = candidates_answer(found, "en")
    assert answer.confidence == 0.0
    assert "none changed before the symptom" in answer.text


PROBE = "http://127.0.0.1:57789/checkout"


async def test_the_candidates_chart_shows_the_symptom_and_the_first_candidate(
    prometheus: tuple[PrometheusTool, dict[str, datetime]],
) -> None:
    """The probe's alert (no runbook): the chart's top is the probe as the scan read it,
    below it the first candidate's changed series, over the scan's window, the onset
    marked. A subject with no symptom series of its own (the database's exporter) gets no
    chart: half a picture."""
    tool, starts = prometheus
    at = starts["pg-lock"] + READ_AFTER
    scanner = ChangeScanner(tool, clock=lambda: at)
    found = await scanner.scan(
        {"instance": PROBE, "job": "blackbox"}, symptom_onset=starts["pg-lock"]
    )
    assert found is not None and found.components and found.symptom is not None
    assert found.symptom.labels["instance"] == PROBE
    chart = candidates_answer(found, "en").chart
    assert chart is not None and chart.evidence is not None
    assert chart.symptom["label"] == f"/checkout: {found.symptom.name}"
    first = found.components[0]
    assert chart.evidence["label"] == f"{first.component}: {first.series[0].name}"
    assert chart.onset == starts["pg-lock"]
    assert found.window is not None
    for series in (chart.symptom, chart.evidence):
        assert len(series["t"]) == len(series["v"]) > 10
        assert found.window.start.timestamp() <= series["t"][0] < series["t"][-1] <= at.timestamp()
    assert (
        chart.title
        == f"/checkout: {found.symptom.name}, and what changed first: {first.component}"
    )
    assert candidates_answer(found, "ru").chart.title == (  # type: ignore[union-attr]
        f"/checkout: {found.symptom.name}, и что изменилось первым: {first.component}"
    )

    at = starts["pg-connections"] + READ_AFTER
    database = await ChangeScanner(tool, clock=lambda: at).scan(
        {"job": "postgres"}, symptom_onset=starts["pg-connections"]
    )
    assert database is not None and database.components and database.symptom is None
    assert candidates_answer(database, "en").chart is None
