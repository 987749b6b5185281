"""`whytree bench understanding`: the labelled sets, and the runner end to end on a few cases."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchmarks.understanding.runner import (
    HOLDOUT,
    TUNING,
    Case,
    default_files,
    format_understanding_report,
    read_cases,
    run_understanding_bench,
)

pytestmark = pytest.mark.slow

FEW = [
    {
        "id": "x1",
        "question": "Почему упал трафик на БС 10291?",
        "language": "ru",
        "pending": None,
        "expect": {"strategy": "deep", "runbook": "cell_traffic_drop",
                   "entities": {"cell": "10291"}, "direction": "drop", "outcome": "technical"},
    },
    {
        "id": "x2",
        "question": "why did traffic drop on cell 10219",
        "language": "en",
        "pending": None,
        "expect": {"strategy": "clarify", "entities": {"cell": "10219"},
                   "outcome": "unknown_entity"},
    },
    {
        "id": "x3",
        "question": "10033",
        "language": "en",
        "pending": {"goal": "Why did traffic drop?", "asked": "cell"},
        "expect": {"strategy": "deep", "entities": {"cell": "10033"}, "outcome": "technical",
                   "answers_pending": True},
    },
    {
        "id": "x4",
        "question": "what is an erlang?",
        "language": "en",
        "pending": None,
        "expect": {"strategy": "deep", "outcome": "technical"},  # labelled wrong on purpose
    },
]  # fmt: skip


def test_the_sets_are_large_varied_and_disjoint() -> None:
    tuning = [read_cases(path) for path in TUNING]
    holdout = read_cases(HOLDOUT) if HOLDOUT.exists() else []
    assert sum(len(part) for part in tuning) >= 300
    ids = [c.id for part in [*tuning, holdout] for c in part]
    assert len(ids) == len(set(ids))
    parts = [*tuning, holdout] if holdout else tuning

    # The tuning cases (cases.yaml) share none with the retired holdouts, the holdout none
    # with any of them (a case is its question in its context: a bare "10291" answers
    # different goals; two holdouts written blind may both say "thanks, that helped").
    def keyed(part: list[Case]) -> set[tuple[str, str | None]]:
        return {(c.question, c.pending.goal if c.pending else None) for c in part}

    written, *retired = (keyed(part) for part in tuning)
    assert not any(written & old for old in retired)
    assert not keyed(holdout) & set().union(*(keyed(part) for part in tuning))
    for part in parts:
        assert {c.language for c in part} == {"ru", "en"}
        assert {c.expect.strategy for c in part} == {"quick", "deep", "clarify", "decline"}
        assert any(c.pending is not None for c in part)
    for path, said in zip(TUNING[1:], ("first holdout", "second", "third", "fourth"), strict=True):
        header = " ".join(path.read_text(encoding="utf-8").split("\n-")[0].lower().split())
        assert said in header and "retired" in header


def test_the_holdout_comes_first_when_it_exists_and_the_tuning_files_always() -> None:
    files = default_files()
    assert files[-len(TUNING) :] == list(TUNING)
    assert files[: -len(TUNING)] == ([HOLDOUT] if HOLDOUT.exists() else [])


async def test_the_runner_answers_each_case_through_the_service(
    database_url: str, tmp_path: Path
) -> None:
    cases = tmp_path / "few.yaml"
    cases.write_text(yaml.safe_dump(FEW, allow_unicode=True), encoding="utf-8")
    figures = await run_understanding_bench([cases], dsn=database_url, data_dir=tmp_path)
    assert figures["cases"] == 4
    assert figures["accuracy"] == 0.75  # the three right, the mislabelled one wrong
    assert [w["id"] for w in figures["wrong"]] == ["x4"]
    assert figures["wrong"][0]["got"]["strategy"] == "quick"
    assert figures["entity_accuracy"] == 1.0 and figures["cause_accuracy"] == 0.75
    assert figures["by_language"]["ru"] == {"cases": 1, "accuracy": 1.0}
    assert figures["holdout"] is None  # a file of one's own is no holdout
    report = format_understanding_report(figures)
    assert "accuracy (whole answer right) 0.750" in report and "no holdout file" in report
    assert "x4" not in report
    failures = format_understanding_report(figures, show_failures=True)
    assert "x4: 'what is an erlang?'" in failures and "x1" not in failures
