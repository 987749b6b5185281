"""`whytree bench incidents`: the runner on a few generated cases, and the figures' arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.incidents.case import IncidentCase, find_cases, read_case
from benchmarks.incidents.generate import generate_cases
from benchmarks.incidents.metrics import CaseResult, brier, ece, figures
from benchmarks.incidents.runner import (
    default_cases,
    format_incidents_report,
    run_incidents_bench,
)

pytestmark = pytest.mark.slow

KEYS = {"cases", "ac_at_1", "ac_at_3", "none_accuracy", "brier", "ece", "mean_checks", "results"}
ROW_KEYS = {"case", "expected", "predicted", "confidence", "correct"}


async def test_the_bench_runs_generated_cases_and_reports_the_documented_keys(
    tmp_path: Path, database_url: str
) -> None:
    # The first five scenarios: outage, area demand, traffic moved, healthy, interference.
    generate_cases(tmp_path, seed=5, count=5)
    result = await run_incidents_bench(tmp_path, dsn=database_url)
    assert set(result) == KEYS and result["cases"] == 5
    assert [set(row) for row in result["results"]] == [ROW_KEYS] * 5
    expected = [row["expected"] for row in result["results"]]
    assert expected == ["technical", "demand", "external", "none", "technical"]
    assert result["ac_at_1"] == 1.0 and result["ac_at_3"] == 1.0
    assert result["none_accuracy"] == 1.0
    assert 0.0 <= result["brier"] <= 0.25 and 0.0 <= result["ece"] <= 1.0
    assert 3 <= result["mean_checks"] <= 15
    report = format_incidents_report(result)
    assert "000-outage-full" in report and "AC@1          1.000" in report
    assert "Brier" in report and "ECE" in report and "mean checks" in report


def test_default_cases_writes_a_fresh_set(tmp_path: Path) -> None:
    root = default_cases(tmp_path, seed=9, count=3)
    paths = find_cases(root)
    assert len(paths) == 3 and root.name == "incidents-seed-9"
    assert read_case(paths[0]).expected_primary == "technical"


def _result(expected: str, predicted: str, confidence: float, top3: tuple[str, ...]) -> CaseResult:
    return CaseResult("c", expected, predicted, confidence, top3, checks=4)


def test_figures_follow_their_definitions() -> None:
    results = [
        _result("technical", "technical", 0.9, ("technical", "demand", "external")),
        _result("demand", "external", 0.6, ("external", "demand", "technical")),
        _result("none", "none", 0.85, ("none",)),
        _result("external", "none", 0.8, ("none",)),
    ]
    got = figures(results)
    assert got["ac_at_1"] == 0.5 and got["ac_at_3"] == 0.75
    assert got["none_accuracy"] == 1.0 and got["mean_checks"] == 4.0
    assert brier(results) == pytest.approx((0.01 + 0.36 + 0.0225 + 0.64) / 4)
    # Bins: 0.6 -> [0.6, 0.7) alone, wrong; 0.8, 0.85 -> [0.8, 0.9), half right; 0.9 alone.
    assert ece(results) == pytest.approx(0.25 * 0.6 + 0.5 * abs(0.5 - 0.825) + 0.25 * 0.1)
    assert figures([])["none_accuracy"] is None and brier([]) == 0.0


def test_a_failed_analysis_scores_as_an_error_with_no_confidence() -> None:
    case = IncidentCase(question="q", language="en", expected_primary="demand")
    result = CaseResult.of("c", case, None, checks=2)
    assert (result.predicted, result.confidence, result.correct) == ("error", 0.0, False)
