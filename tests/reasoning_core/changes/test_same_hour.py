"""What changes every day at this hour is not news: a nightly job's series that stepped up at
02:00 yesterday too is left out of the candidates, while the service whose series stepped
only today is named — over series turned into TSDB blocks by promtool and served by a real
Prometheus."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from reasoning_core.changes.scan import ScanResult, read_targets, scan
from reasoning_core.tools.prometheus import PrometheusTool

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

TODAY = datetime(2026, 11, 26, tzinfo=UTC)
YESTERDAY = TODAY - timedelta(days=1)
STEP = timedelta(seconds=15)
#: The symptom began a minute after both steps; the scan reads two minutes after it.
ONSET = TODAY.replace(hour=2, minute=1)
AT = ONSET + timedelta(minutes=2)


def _samples(day: datetime, before: float, after: float) -> Iterator[tuple[int, float]]:
    """From 01:30 to 02:10 of `day`, one sample per 15 s: `before`, then `after` from 02:00."""
    at, end = day.replace(hour=1, minute=30), day.replace(hour=2, minute=10)
    step_at = day.replace(hour=2)
    while at <= end:
        yield int(at.timestamp()), before if at < step_at else after
        at += STEP


def _family(name: str, labels: str, days: list[tuple[datetime, float, float]]) -> list[str]:
    lines = [f"# TYPE {name} gauge"]
    for day, before, after in days:
        lines += [f"{name}{{{labels}}} {v} {t}" for t, v in _samples(day, before, after)]
    return lines


def _recording(nightly_job_yesterday: bool) -> str:
    batch, web = 'instance="h:9101",job="batch"', 'instance="h:9102",job="web"'
    yesterday_rows = 500.0 if nightly_job_yesterday else 10.0
    lines = [
        "# TYPE up gauge",
        *[f"up{{{batch}}} 1 {t}" for day in (YESTERDAY, TODAY) for t, _ in _samples(day, 1, 1)],
        *[f"up{{{web}}} 1 {t}" for day in (YESTERDAY, TODAY) for t, _ in _samples(day, 1, 1)],
        *_family("batch_rows", batch, [(YESTERDAY, 10, yesterday_rows), (TODAY, 10, 500)]),
        *_family("web_inflight", web, [(YESTERDAY, 5, 5), (TODAY, 5, 80)]),
        "# EOF",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(params=[True, False], ids=["nightly-job", "once"])
async def scanned(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[bool, ScanResult]]:
    nightly: bool = request.param
    source = tmp_path / "series.om"
    source.write_text(_recording(nightly_job_yesterday=nightly))
    build_tsdb(source, tmp_path / "tsdb")
    async with LocalPrometheus(tmp_path / "tsdb") as server:
        tool = PrometheusTool(server.url)
        targets = await read_targets(tool, at=AT)
        yield nightly, await scan(tool, targets, {"job": "web"}, at=AT, symptom_onset=ONSET)


async def test_what_changed_yesterday_at_this_hour_is_left_out(
    scanned: tuple[bool, ScanResult],
) -> None:
    nightly, result = scanned
    names = [c.component for c in result.components]
    text = result.describe("en")
    if nightly:  # the job stepped at 02:00 yesterday too: every day at this hour
        assert names == ["web"] and result.daily == 1, text
        assert text.endswith("; 1 series that changes every day at this hour left out"), text
        assert "каждый день" in result.describe("ru")
    else:  # it stepped only today: a candidate like any other
        assert sorted(names) == ["batch", "web"] and result.daily == 0, text


def _ticks(day: datetime, *, before: int, after: int, per_tick: int) -> list[str]:
    """A counter of `day` from 01:30: `per_tick` units every `before`-th step (0: still)
    before 02:00, every `after`-th step from then."""
    total, lines = 0, []
    for i, (t, moving) in enumerate(_samples(day, 0, 1)):
        every = after if moving else before
        total += per_tick if every and i % every == 0 else 0
        lines.append(f'batch_ticks_total{{instance="h:9101",job="batch"}} {total} {t}')
    return lines


async def test_a_counter_still_until_the_window_then_moving_in_hundreds_changed(
    tmp_path: Path,
) -> None:
    """Today the batch counter went from still to a hundred a step at 02:00 (yesterday from a
    unit every fourth step to one every other: its rounding). Its unit is how it moved while
    normal, not the hundreds of the window (a unit of a hundred made a hundred a step look
    like rounding); yesterday's rounding is not the same change: a candidate."""
    batch = 'instance="h:9101",job="batch"'
    lines = [
        "# TYPE up gauge",
        *[f"up{{{batch}}} 1 {t}" for day in (YESTERDAY, TODAY) for t, _ in _samples(day, 1, 1)],
        "# TYPE batch_ticks_total counter",
        *_ticks(YESTERDAY, before=4, after=2, per_tick=1),
        *_ticks(TODAY, before=0, after=1, per_tick=100),
        "# EOF",
    ]
    source = tmp_path / "series.om"
    source.write_text("\n".join(lines) + "\n")
    build_tsdb(source, tmp_path / "tsdb")
    async with LocalPrometheus(tmp_path / "tsdb") as server:
        tool = PrometheusTool(server.url)
        targets = await read_targets(tool, at=AT)
        result = await scan(tool, targets, {"job": "batch"}, at=AT, symptom_onset=ONSET)
    assert [c.component for c in result.components] == ["batch"], result.describe("en")
    assert result.daily == 0
