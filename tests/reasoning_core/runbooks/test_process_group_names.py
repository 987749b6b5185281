"""A process group's own trouble is named by the group (issue 55's system lab: "… eats CPU:
host 127.0.0.1" ranked the host first where the stock service's group was the cause): the
group's CPU, memory and file-descriptor checks name the group in the primary cause, over
rows as their queries return them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reasoning_core.runbooks import load_runbooks
from reasoning_core.runbooks.timewindow import TimeWindow
from reasoning_core.runbooks.verdicts import evaluate

RUNBOOK = load_runbooks().runbooks["process_group"]
CHECKS = {c.id: c for c in RUNBOOK.checks}
NOW = datetime(2026, 12, 4, 3, 0, tzinfo=UTC)
WINDOW = TimeWindow(
    recent_start=NOW - timedelta(minutes=3), recent_end=NOW + timedelta(minutes=1),
    baseline_start=NOW - timedelta(hours=1), baseline_end=NOW - timedelta(minutes=3),
    source="default",
)  # fmt: skip


def rows(value: float) -> list[dict[str, Any]]:
    """The group's series over the recent window, as `max by (groupname)` returns it."""
    return [
        {"groupname": "stock", "dt": NOW - timedelta(seconds=15 * i), "value": value}
        for i in range(8)
    ]


@pytest.mark.parametrize(
    ("check", "value"),
    [("group_cpu_high", 1.0), ("group_memory_growth", 120.0), ("group_fd_near_limit", 1.0)],
)
def test_the_groups_own_trouble_names_the_group(check: str, value: float) -> None:
    assert "groupname" in (CHECKS[check].query or "")
    evidence = evaluate(CHECKS[check].verdict, rows(value), WINDOW)
    assert evidence.confirmed is True, evidence.text
    assert evidence.data["series_name"] == "stock", evidence.data
    assert evidence.data["by"] == "process group"
    assert "process group stock" in evidence.text
