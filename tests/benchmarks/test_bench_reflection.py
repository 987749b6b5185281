"""`whytree bench reflection`: hard cases and the rest, with reflection on and off."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.incidents.case import find_cases, read_case
from benchmarks.reflection import (
    format_reflection_report,
    run_reflection_bench,
    write_reflection_cases,
)

pytestmark = pytest.mark.slow

KEYS = {"cases", "ac_at_1_with", "ac_at_1_without", "rest_ac_at_1_with", "rest_ac_at_1_without"}


def test_hard_cases_hide_a_technical_cause_behind_missing_recent_data(tmp_path: Path) -> None:
    root = write_reflection_cases(tmp_path, seed=3, hard=2, rest=1)
    hard = find_cases(root / "hard")
    assert [p.name for p in hard] == [
        "r000-outage-availability-unreported",
        "r001-interference-rtwp-unreported",
    ]
    assert {read_case(p).expected_primary for p in hard} == {"technical"}
    assert len(find_cases(root / "rest")) == 1


async def test_reflection_wins_on_hard_cases_and_loses_nothing_on_the_rest(
    tmp_path: Path, database_url: str
) -> None:
    root = write_reflection_cases(tmp_path, seed=3, hard=4, rest=4)
    result = await run_reflection_bench(dsn=database_url, cases_dir=root)
    assert set(result) == KEYS and result["cases"] == 4
    assert result["ac_at_1_with"] >= result["ac_at_1_without"] + 0.15
    assert result["rest_ac_at_1_with"] >= result["rest_ac_at_1_without"]
    report = format_reflection_report(result)
    assert "AC@1 with reflection" in report and "points (target >= +15)" in report
