"""The question path's bench: question files, and answers scored as the live bench scores
reports (the lab itself runs in tests/lab/test_live.py and `whytree bench live --ask`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.asking import Reply, load_questions, score_answer, states_cause, summarise_asked
from lab.fault import find_fault
from lab.lab import LabError

QUESTIONS = Path(__file__).parents[2] / "lab" / "questions"


def test_the_shipped_question_files_name_shipped_faults_in_both_languages() -> None:
    for name in ("asked.yaml", "holdout.yaml", "holdout2.yaml", "typed.yaml"):
        questions = load_questions(QUESTIONS / name).questions
        for fault, asked in questions.items():
            assert find_fault(fault).name == fault
            assert any(any("а" <= ch <= "я" for ch in q.lower()) for q in asked), fault
            assert any(q.isascii() for q in asked), fault


def test_a_question_file_that_is_not_a_list_of_questions_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("cpu-hog:\n  - postgres: too many clients\n")  # a mapping, not a question
    with pytest.raises(LabError, match="maps fault names to lists of questions"):
        load_questions(bad)


def test_an_answer_is_scored_on_its_cause_line_only() -> None:
    fault = find_fault("bad-release")
    wrong = Reply(
        text="web · 5xx share 100%\nPossible cause (the others were ruled out): A slow "
        "network path: groupname db-proxy (0.45)\nWhat would confirm it: no new version…",
        strategy="deep",
        confidence=0.45,
    )
    scored = score_answer(fault, wrong)
    assert not scored["cause_ok"] and not scored["wrong_cause"]  # "version" is not the cause
    right = Reply(
        text="web · 5xx 100% · route /checkout\nОсновная причина: новая версия (релиз) сервиса "
        "падает — уверенность высокая (0.9)\n\nДанные: …",
        strategy="deep",
        confidence=0.9,
    )
    assert score_answer(fault, right)["cause_ok"] and score_answer(fault, right)["component_ok"]


def test_no_cause_is_named_by_a_healthy_conclusion_a_question_or_no_runbook() -> None:
    assert not states_cause("web · p95 0.09\nConclusion: No route has a high 5xx share (0.70)")
    assert not states_cause("No runbook of mine fits this question, and no language model …")
    assert not states_cause("I need a detail before I start (1 of 1):\nWhich host?")
    assert states_cause("web · up 0\nPrimary cause: The process is down — confidence high")


def test_a_wrong_cause_stated_with_confidence_and_a_no_model_reply_are_counted() -> None:
    fault = find_fault("web-killed")
    wrong = Reply("web · CPU 0.9\nPrimary cause: The process group eats CPU (0.8)", "deep", 0.8)
    no_model = Reply(
        "No language model is configured, so I can't answer free-form questions", "quick", 0.0
    )
    quiet = find_fault("nothing-wrong")
    rows = [
        {**score_answer(fault, wrong), "set": "asked", "question": "q1", "answer_s": 0.1},
        {**score_answer(fault, no_model), "set": "holdout", "question": "q2", "answer_s": 0.2},
        {**score_answer(quiet, wrong), "set": "holdout", "question": "q3", "answer_s": 0.3},
    ]
    figures = summarise_asked(rows, ["asked", "holdout"])
    assert figures["wrong_causes"] == 1 and figures["false_causes"] == 1
    assert figures["no_model_replies"] == 1 and figures["ac_at_1_cause"] == 0.0
    assert figures["sets"]["holdout"]["asked"] == 2
    assert figures["by_fault"]["nothing-wrong"]["false_causes"] == 1


def test_the_no_runbook_reply_is_no_no_model_reply() -> None:
    listing = Reply(
        "No runbook of mine fits this question, and no language model is configured to "
        "investigate it openly, so I have not looked yet. What I can investigate here: …",
        "quick",
        0.0,
    )
    assert not score_answer(find_fault("web-killed"), listing)["no_model_reply"]


def test_an_all_clear_during_a_fault_is_counted_like_a_wrong_cause() -> None:
    """Issue 56: "nothing is wrong" said with confidence while a fault runs is a false all
    clear; unsure, or in the nothing-wrong window, it is not; a clarifying question is counted
    apart."""
    fault, quiet = find_fault("slow-db"), find_fault("nothing-wrong")
    clear = Reply(
        "web · p95 48 ms\nConclusion: PostgreSQL is up, with free connections (0.70)", "deep", 0.7
    )
    swept = Reply("Вывод: Nothing looks wrong right now: no alert firing (0.80)", "deep", 0.8)
    unsure = Reply("Conclusion: Alerts are firing (HttpHighLatency) (0.30)", "deep", 0.3)
    asked = Reply("I need a detail before I start (1 of 1):\nWhich host?", "clarify", None)
    rows = [
        {**score_answer(f, r), "set": "typed", "question": "q", "answer_s": 0.1}
        for f, r in (
            (fault, clear),
            (fault, swept),
            (fault, unsure),
            (quiet, clear),
            (fault, asked),
        )
    ]
    assert [r["false_all_clear"] for r in rows] == [True, True, False, False, False]
    figures = summarise_asked(rows, ["typed"])
    assert figures["false_all_clear"] == 2 and figures["clarifying_questions"] == 1
    assert figures["false_causes"] == 0 and figures["wrong_causes"] == 0
