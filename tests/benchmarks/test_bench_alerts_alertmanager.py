"""`whytree bench alerts --via-alertmanager`, small: every figure the issue names, and
every report silenced by exactly one silence no wider than its group."""

from __future__ import annotations

import pytest

from benchmarks.alerts import format_alerts_report, run_alerts_via_alertmanager
from tests.bot.alertmanager_front import NEEDS_ALERTMANAGER

pytestmark = [pytest.mark.slow, NEEDS_ALERTMANAGER]


async def test_a_small_burst_through_alertmanager_is_reported_and_silenced(
    database_url: str,
) -> None:
    figures = await run_alerts_via_alertmanager(
        dsn=database_url, alerts=24, distinct=4, group=5, timeout_s=120
    )
    assert figures["via"] == "alertmanager"
    assert (figures["alerts"], figures["analyses_started"]) == (48, 4)
    assert (figures["reports_posted"], figures["lost"]) == (4, 0)
    assert figures["resolved_edits"] == 1  # a quarter of the cells resolved
    assert figures["silences_created"] == figures["silence_presses"] == 4
    assert figures["silences_wider_than_group"] == 0
    assert figures["alertmanager_notifications"] >= 4
    assert "silences wider than group: 0" in format_alerts_report(figures)
