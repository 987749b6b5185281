"""The reasoning core's own words in Russian: the paths the demo's happy cases do not reach.

A Russian analysis whose checks fail, time out, are cut by a budget or a deadline and
never settle a winner must still be reported entirely in Russian: the "not
established" report, the not-checked lines, the uncertainty causes, the reflection's
progress lines and decisions, the merge strategies' notes and every progress line.
The same paths in English keep their English words (and no Russian ones).
"""

from __future__ import annotations

from typing import Any

import pytest

from reasoning_core.answers.deep_analyst import deep_answer
from reasoning_core.answers.fixed import deep_busy_answer, llm_failure_answer, no_llm_answer
from reasoning_core.errors import LLMError, LLMTimeoutError
from reasoning_core.explore.budgets import Budgets, BudgetTracker
from reasoning_core.explore.merge import merge, with_unchecked
from reasoning_core.explore.progress import _LINES, Line, prefixed
from reasoning_core.models import Answer, StrategyDecision
from reasoning_core.reflection.checkpoints import failed_checks
from reasoning_core.reflection.decision import EARLY_STOP, decide
from reasoning_core.reflection.reflector import (
    Reflection,
    plan_revised_message,
    reflection_message,
)
from reasoning_core.reflection.retry import how_text
from reasoning_core.reflection.revision import SET_ASIDE
from reasoning_core.reflection.tracker import CheckpointTracker
from reasoning_core.reflection.uncertainty import with_uncertainty
from reasoning_core.tree.edits import close_node
from reasoning_core.tree.reasons import reason_text
from reasoning_core.tree.synthesis import synthesize
from tests.language import english_words, russian_words
from tests.reasoning_core.reflection.helpers import Builder, ev


def failing_tree(language: str) -> Builder:
    """Two hypotheses; checks that time out, find nothing, are cut or stay inconclusive."""
    ru = language == "ru"
    b = Builder()
    outage = b.hyp("авария" if ru else "outage", prior=0.3)
    demand = b.hyp("спрос" if ru else "demand", prior=0.3)
    b.check(outage, "доступность" if ru else "availability", reject="sql timeout: 30")
    empty = "строк нет" if ru else "no rows"
    b.check(outage, "шум" if ru else "noise", ev(None, 0.0, empty, rows=0))
    thin = "мало замеров" if ru else "few samples"
    b.check(demand, "попытки" if ru else "attempts", ev(None, 0.0, thin, reason=thin))
    b.check(demand, "соседи" if ru else "neighbours", ev(True, 0.3, "+5%" if ru else "up 5%"))
    cut = b.check(demand, "площадка" if ru else "site")
    close_node(b.tree, cut, "pruned", "budget exhausted: the tree reached 40 nodes")
    late = b.check(outage, "аварии" if ru else "alarms")
    close_node(b.tree, late, "pruned", "deadline reached after 120 s")
    return b


def decision(language: str, confidence: float = 0.6) -> StrategyDecision:
    return StrategyDecision(
        strategy="deep",
        confidence=confidence,
        reason="диагностика" if language == "ru" else "a diagnosis",
        language=language,
    )


def words_of(language: str, text: str) -> list[str]:
    return english_words(text) if language == "ru" else russian_words(text)


@pytest.mark.parametrize("language", ["ru", "en"])
def test_an_unsettled_analysis_is_reported_in_one_language(language: str) -> None:
    b = failing_tree(language)
    synthesis = with_unchecked(b.tree, synthesize(b.tree, language=language), language=language)
    answer = deep_answer(
        synthesis, tree_id="a1b2c3d4e5f6", planner="runbook", language=language, tree=b.tree
    )
    answer = with_uncertainty(answer.model_copy(update={"decision": decision(language)}))
    assert answer.synthesis is not None and answer.synthesis.not_established
    assert answer.language == language and answer.uncertainty_reason
    for text in (answer.text, answer.uncertainty_reason, *answer.synthesis.recommendations):
        assert not words_of(language, text), text
    if language == "ru":
        assert "без ответа" in answer.text and "время анализа истекло" in answer.text


def test_every_reason_the_explorer_stores_reads_in_russian() -> None:
    tracker = BudgetTracker(Budgets(max_llm_calls=1, max_nodes=2), clock=lambda: 0.0)
    tracker.take_planner_call()
    reasons = [
        tracker.take_planner_call(),
        tracker.node_refusal(5),
        "deadline reached after 120 s",
        f"{EARLY_STOP}: the root is confident (0.93)",
        "not run",
        "superseded by its retry h1.v3",
        f"{SET_ASIDE} 1: no hypothesis reached 0.5 (best: 'x' at 0.20)",
        "cannot run this check: unknown tool",
        "cannot run this check: its request could not be read back",
        "could not plan its checks: 30",
        "could not interpret the result: 30",
        "h2 is strongly contradicted (0.05)",
        "promise 0.010 below the pruning threshold",
        "repeats the earlier hypothesis 'demand'",
        "unknown tool 'shell' (available: sql)",
        "the planner proposed no usable checks",
        "the check returned no rows",
        "the result was inconclusive",
        "sql timeout: 30",
    ]
    for reason in reasons:
        assert reason is not None
        assert reason_text(reason, "en") == reason
        worded = reason_text(reason, "ru")
        quoted = ["'demand'", "'shell'"]
        assert worded != reason and not english_words(worded, quoted=quoted), worded


def test_failed_checks_keep_their_english_reason_for_the_planner() -> None:
    b = failing_tree("ru")
    reasons = {f.reason for f in failed_checks(b.tree)}
    assert "sql timeout: 30" in reasons  # markers other code reads stay as stored


def test_every_progress_line_reads_in_both_languages() -> None:
    values: dict[str, Any] = {
        "id": "h1.v2", "title": "доступность", "reason": "deadline reached after 9 s",
        "verdict": True, "p": 0.5, "text": "доступность 100%", "of": "h1.v1",
        "how": how_text("wider_window", "ru"), "failed": "llm", "fallback": "runbook",
        "error": "503", "key": "availability_drop",
    }  # fmt: skip
    for key in set(_LINES) - {"prefix"}:
        worded = Line(key, values).text("ru")
        assert not english_words(worded, quoted=["availability_drop", "llm", "runbook"]), worded
        in_english = {"title": "availability", "text": "up 5%", "how": how_text("again", "en")}
        english = Line(key, {**values, **in_english}).text("en")
        assert not russian_words(english), english
    line = prefixed("Пишу вывод…", done=3, total=7, open_hypotheses=2, language="ru")
    assert line.startswith("Глубокий анализ · проверок 3/7") and not english_words(line)
    line = prefixed("Writing", done=3, total=7, open_hypotheses=1, language="en")
    assert line == "Deep analysis · 3/7 checks · 1 hypothesis open · Writing"


def test_reflection_decisions_and_lines_read_in_russian() -> None:
    b = failing_tree("ru")
    checkpoints = CheckpointTracker(every=1).observe(b.tree)
    for left in (1, 0):
        found = decide(b.tree, checkpoints, revisions_left=left, language="ru")
        line = reflection_message(Reflection(checkpoints=checkpoints, decision=found), "ru")
        assert line.startswith("Рефлексия") and not english_words(line), line
    revised = plan_revised_message(1, "no hypothesis reached 0.5", ["Перенос трафика"], "ru")
    assert not english_words(revised), revised
    assert how_text("again", "ru") != how_text("again", "en")


def test_merge_notes_read_in_russian() -> None:
    b = failing_tree("ru")
    aggregated = synthesize(b.tree, language="ru")
    worded = aggregated.model_copy(
        update={"primary": aggregated.ranking[1], "ranking": aggregated.ranking}
    )
    for strategy in ("weighted_vote", "llm_synthesis"):
        merged = merge(strategy, b.tree, aggregated, worded, language="ru")
        assert merged.uncertainty_reason
        assert not english_words(merged.uncertainty_reason), merged.uncertainty_reason


@pytest.mark.parametrize("language", ["ru", "en"])
def test_fixed_answers_speak_the_questions_language(language: str) -> None:
    answers: list[Answer] = [
        no_llm_answer(language),
        llm_failure_answer(LLMTimeoutError("slow"), language),
        llm_failure_answer(LLMError("bad"), language),
        deep_busy_answer(1, decision(language)),
        deep_busy_answer(2, decision(language)),
    ]
    for answer in answers:
        assert answer.language == language
        for text in (answer.text, answer.uncertainty_reason or ""):
            assert not words_of(language, text.replace("OPENAI_BASE_URL", "")), text
