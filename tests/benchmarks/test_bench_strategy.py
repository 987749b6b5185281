"""`bench strategy`: the shipped labelled set, the runner's figures and its report."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from benchmarks.strategy.runner import (
    DEFAULT_CASES,
    CasesFileError,
    format_strategy_report,
    load_cases,
    run_strategy_bench,
)
from reasoning_core.models import STRATEGIES
from reasoning_core.ports import ChatMessage
from tests.fakes.scripted import ScriptedChatModel


def test_shipped_cases_cover_every_class_in_both_languages() -> None:
    cases = load_cases(DEFAULT_CASES)
    assert len(cases) >= 120
    per_class = Counter(c.expected for c in cases)
    assert all(per_class[s] >= 25 for s in STRATEGIES), per_class
    assert {c.language for c in cases} == {"ru", "en"}
    assert all(c.why for c in cases)
    assert len({c.question for c in cases}) == len(cases)


async def test_heuristic_meets_the_targets_on_the_shipped_set() -> None:
    result = await run_strategy_bench(DEFAULT_CASES, None)
    assert set(result) == {"heuristic", "llm", "exfiltration"}
    exfiltration = result["exfiltration"]
    assert set(exfiltration) == {"tuned", "holdout"}
    for figures in exfiltration.values():
        assert {"precision", "recall", "tp", "fp", "fn", "tn"} <= set(figures)
        assert figures["attempts"] + figures["lookalikes"] == sum(
            figures[k] for k in ("tp", "fp", "fn", "tn")
        )
    assert result["llm"] is None
    figures = result["heuristic"]
    assert set(figures) == {"accuracy", "precision", "recall", "confusion"}
    assert set(figures["precision"]) == set(figures["recall"]) == set(STRATEGIES)
    assert figures["accuracy"] >= 0.85
    assert all(figures["recall"][s] >= 0.80 for s in STRATEGIES), figures["recall"]
    confusion = figures["confusion"]
    assert sum(sum(row.values()) for row in confusion.values()) == len(load_cases(DEFAULT_CASES))
    json.dumps(result)  # what `--json` prints
    report = format_strategy_report(result)
    assert "== exfiltration declines (rules, no LLM) ==" in report
    assert re.search(r"^holdout\s+30\s+30\s+\d\.\d{3}\s+\d\.\d{3}", report, re.MULTILINE)


def _answer_from_label(messages: Sequence[ChatMessage]) -> str:
    """A model that calls everything with a cell id 'deep' and everything else 'quick'."""
    match = re.search(r"<message>\n(.*)\n</message>", messages[-1].content or "", re.DOTALL)
    question = match.group(1) if match else ""
    strategy = "deep" if re.search(r"\d{4,}", question) else "quick"
    return json.dumps({"strategy": strategy, "confidence": 0.8, "reason": "scripted"})


async def test_llm_path_is_scored_when_a_model_is_given(tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        "cases:\n"
        "  - {question: 'why did traffic drop on cell 12345?', expected: deep, language: en}\n"
        "  - {question: 'hello', expected: quick, language: en}\n"
        "  - {question: 'why is it slow', expected: clarify, language: en}\n"
        "  - {question: 'how many cells carry over 10000 GB a day?', expected: quick,"
        " language: en}\n",
        encoding="utf-8",
    )
    model = ScriptedChatModel(_answer_from_label)
    result = await run_strategy_bench(cases, model)
    llm = result["llm"]
    # The model's quick for "why is it slow" is not followed (an incident question the rules
    # would clarify); its deep for the count is: that one is scored wrong.
    assert llm["accuracy"] == pytest.approx(3 / 4, abs=1e-3)
    assert llm["confusion"]["clarify"]["clarify"] == 1
    assert llm["confusion"]["quick"]["deep"] == 1
    assert llm["recall"]["quick"] == 0.5
    assert llm["precision"]["deep"] == 0.5
    assert llm["recall"]["decline"] is None  # no decline case: undefined, not zero
    assert result["heuristic"]["accuracy"] == 1.0
    # The rules are sure of the first two (a linked cell and a symptom; small talk): no call.
    assert len(model.calls) == 2


def test_report_shows_figures_and_the_confusion_matrix() -> None:
    result = {
        "heuristic": {
            "accuracy": 0.75,
            "precision": {"quick": 1.0, "deep": 0.5, "clarify": None, "decline": 1.0},
            "recall": {"quick": 0.5, "deep": 1.0, "clarify": None, "decline": 1.0},
            "confusion": {
                "quick": {"quick": 1, "deep": 1, "clarify": 0, "decline": 0},
                "deep": {"quick": 0, "deep": 1, "clarify": 0, "decline": 0},
                "clarify": {"quick": 0, "deep": 0, "clarify": 0, "decline": 0},
                "decline": {"quick": 0, "deep": 0, "clarify": 0, "decline": 1},
            },
        },
        "llm": None,
    }
    report = format_strategy_report(result)
    assert "accuracy  0.750  (4 questions)" in report
    assert re.search(r"quick\s+1\.000\s+0\.500\s+2", report)
    assert re.search(r"clarify\s+n/a\s+n/a\s+0", report)
    assert "confusion (rows: expected, columns: predicted)" in report
    assert re.search(r"^quick\s+1\s+1\s+0\s+0$", report, re.MULTILINE)
    assert "== llm ==\nnot configured" in report


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "cases:\n  - {question: hi, expected: quick, language: en}\n"
            "  - {question: 'drop it', expected: refuse, language: en}\n",
            "case #2 ('drop it'): expected:",
        ),
        (
            "cases:\n  - {question: hi, expected: quick}\n",
            "case #1 ('hi'): language: Field required",
        ),
        ("cases:\n  - {question: '', expected: quick, language: en}\n", "case #1: question:"),
        ("cases:\n  - {question: hi, expected: quick, language: en, extra: 1}\n", "extra"),
        ("cases: []\n", "non-empty list"),
        ("cases: [unclosed\n", "cannot read cases"),
    ],
)
def test_bad_cases_file_names_the_bad_entry(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CasesFileError) as info:
        load_cases(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)
