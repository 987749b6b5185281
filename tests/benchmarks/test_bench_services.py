"""`whytree bench incidents --suite services`: cases on a real Prometheus, and the figures."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from benchmarks.cli import add_bench_parsers
from benchmarks.incidents.metrics import CaseResult
from benchmarks.services.case import find_cases, read_case
from benchmarks.services.generate import KINDS, generate_cases
from benchmarks.services.runner import (
    default_cases,
    format_services_report,
    run_services_bench,
    summarise,
)
from demo.services import unavailable_reason

pytestmark = pytest.mark.slow

KEYS = {
    "cases", "ac_at_1", "ac_at_3", "none_accuracy", "brier", "ece", "mean_checks", "results",
    "per_kind", "root_accuracy",
}  # fmt: skip


@pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")
async def test_the_services_bench_runs_generated_cases_on_prometheus(
    tmp_path: Path, database_url: str
) -> None:
    generate_cases(tmp_path, seed=11, count=2)  # a bad deploy, a slow dependency
    result = await run_services_bench(tmp_path, dsn=database_url)
    assert set(result) == KEYS and result["cases"] == 2
    assert [r["expected"] for r in result["results"]] == ["deploy", "dependency"]
    assert [r["predicted"] for r in result["results"]] == ["deploy", "dependency"]
    assert result["root_accuracy"] == 1.0
    assert result["results"][1]["root"] == read_case(find_cases(tmp_path)[1]).expected_root
    # tool runs per case: each conclusive Prometheus check also asks whether the series it
    # read stopped (reasoning_core/runbooks/freshness.py), about twice the checks themselves
    assert result["brier"] <= 0.12 and 5 <= result["mean_checks"] <= 30
    report = format_services_report(result)
    assert "root service  1.000" in report and "dependency" in report
    json.dumps(result)  # --json prints it as one object


def test_cases_cover_every_kind_deterministically(tmp_path: Path) -> None:
    root = default_cases(tmp_path, seed=3, count=len(KINDS))
    again = default_cases(tmp_path / "again", seed=3, count=len(KINDS))
    cases = [read_case(p) for p in find_cases(root)]
    assert [c.expected for c in cases] == list(KINDS)
    assert cases == [read_case(p) for p in find_cases(again)]
    dependency = cases[KINDS.index("dependency")]
    assert dependency.expected_root and dependency.expected_root != dependency.service
    assert dependency.service in dependency.question
    none = cases[KINDS.index("none")]
    assert all(f.service != none.service for f in none.faults)


def test_per_kind_figures_and_root_accuracy(tmp_path: Path) -> None:
    cases = [read_case(p) for p in find_cases(default_cases(tmp_path, seed=4, count=2))]
    rows = [
        (cases[0], CaseResult("a", "deploy", "deploy", 0.9, ("deploy",), 7), None),
        (cases[1], CaseResult("b", "dependency", "dependency", 0.8, ("dependency",), 9), "x"),
    ]
    got = summarise(rows)
    assert got["per_kind"]["deploy"]["ac_at_1"] == 1.0
    assert got["per_kind"]["dependency"]["brier"] == pytest.approx(0.04)
    assert got["root_accuracy"] == 0.0  # "x" is not the planted root


def test_the_cli_takes_the_services_suite() -> None:
    parser = argparse.ArgumentParser()
    add_bench_parsers(parser.add_subparsers(dest="bench"))
    args = parser.parse_args(["incidents", "--suite", "services", "--seed", "2", "--json"])
    assert (args.suite, args.seed, args.json) == ("services", 2, True)
