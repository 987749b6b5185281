"""Lock waits are read as they are now (issue 54): during a slow path asked about right after
a lock incident, "PostgreSQL lock contention · 0.67" was that incident's queue, gone a minute
before, read as the maximum of the recent window. pg_locks_count series served by a real
Prometheus; postgres_trouble's check judged over the same window as an analysis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from demo.services import unavailable_reason
from reasoning_core.models import Evidence
from reasoning_core.runbooks import load_runbooks
from reasoning_core.runbooks.kinds import Bound, kind_of
from reasoning_core.runbooks.timewindow import TimeWindow
from reasoning_core.runbooks.verdicts import evaluate
from reasoning_core.tools.prometheus import PrometheusTool
from tests.recordings import served_series

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

NOW = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
RUNBOOK = load_runbooks().runbooks["postgres_trouble"]
CHECK = next(c for c in RUNBOOK.checks if c.id == "pg_lock_waits")
INSTANCE = "127.0.0.1:9187"


def _series(*, ended_s: float | None) -> str:
    """30 min of exclusive lock waits, one sample each 5 s: none, then 9 from 4 min before
    NOW — until `ended_s` seconds before NOW (None: still)."""
    lines = ["# TYPE pg_locks_count gauge"]
    labels = f'datname="postgres",instance="{INSTANCE}",mode="exclusivelock"'
    at = NOW - timedelta(minutes=30)
    while at <= NOW:
        queued = at >= NOW - timedelta(minutes=4) and (
            ended_s is None or at < NOW - timedelta(seconds=ended_s)
        )
        lines.append(f"pg_locks_count{{{labels}}} {9 if queued else 0} {at.timestamp():.0f}")
        at += timedelta(seconds=5)
    return "\n".join([*lines, "# EOF"]) + "\n"


async def _verdict(text: str) -> Evidence:
    window = TimeWindow(
        recent_start=NOW - timedelta(minutes=5),
        recent_end=NOW,
        baseline_start=NOW - timedelta(minutes=30),
        baseline_end=NOW - timedelta(minutes=5),
        source="default",
    )
    async with served_series(text, prefix="whytree-locks-") as url:
        kind = kind_of(CHECK.tool)
        values = {"instance": INSTANCE, **RUNBOOK.metrics}
        bound = Bound(values=values, window=window, anchor=NOW, max_rows=500)
        result = await PrometheusTool(url).run(kind.request(CHECK, bound))
        assert result.ok, result.error
        return evaluate(CHECK.verdict, kind.rows(result), window)


async def test_a_queue_still_there_is_lock_contention() -> None:
    evidence = await _verdict(_series(ended_s=None))
    assert evidence.confirmed is True, evidence.text


async def test_a_queue_gone_a_minute_and_a_half_ago_is_no_lock_contention_now() -> None:
    evidence = await _verdict(_series(ended_s=90))
    assert evidence.confirmed is False, evidence.text
