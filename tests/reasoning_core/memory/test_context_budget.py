"""The per-call token budget and the session history selection."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasoning_core.memory.budget import (
    ContextBudget,
    EstimatingCounter,
    Step,
    history_messages,
    prompt_tokens,
    select_session_history,
    truncate_to_tokens,
)
from reasoning_core.ports import ChatMessage, Exchange

NOW = datetime(2025, 3, 2, 12, 0, tzinfo=UTC)
COUNT = EstimatingCounter().count


class WordCounter:
    """Another counter, to show counting is pluggable: one token per word, one per line."""

    def count(self, text: str) -> int:
        return len(text.split()) + text.count("\n")


def _history(turns: int, size: int = 400) -> list[ChatMessage]:
    messages = []
    for n in range(turns):
        messages.append(ChatMessage(role="user", content=f"question {n} " + "q" * size))
        messages.append(ChatMessage(role="assistant", content=f"answer {n} " + "word " * size))
    return messages


def _steps(n: int, detail_chars: int = 3000, summary_words: int = 1) -> list[Step]:
    return [
        Step(
            index=i,
            title=f"check {i}",
            summary=f"finding {i}" + " because" * summary_words,
            detail=f"rows of step {i}\n" + "cell,hour,traffic\n" * (detail_chars // 18),
            group=f"h{i % 3}",
        )
        for i in range(1, n + 1)
    ]


# --- counting and cutting ----------------------------------------------------------


def test_estimate_is_offline_and_errs_high_for_cyrillic() -> None:
    assert COUNT("") == 0
    assert COUNT("abcd") == 1 and COUNT("abcde") == 2
    assert COUNT("сота") == 2, "Cyrillic costs more tokens per character"


def test_tool_output_is_cut_with_a_note() -> None:
    output = "\n".join(f"row {i}: cell 12345 traffic {i}" for i in range(500))
    cut = truncate_to_tokens(output, 100, COUNT)
    assert COUNT(cut) <= 100
    assert cut.startswith("row 0:")
    assert "[… truncated to fit the context budget" in cut
    assert f"{len(output)} characters in full" in cut
    assert truncate_to_tokens("short", 100, COUNT) == "short"
    assert truncate_to_tokens(output, 3, COUNT) == "", "no room even for the note"


@given(text=st.text(max_size=3000), limit=st.integers(min_value=0, max_value=800))
def test_truncation_never_exceeds_its_share(text: str, limit: int) -> None:
    assert COUNT(truncate_to_tokens(text, limit, COUNT)) <= limit


# --- fitting a prompt --------------------------------------------------------------


def test_small_prompt_is_kept_whole() -> None:
    budget = ContextBudget(4000)
    fitted = budget.fit(
        system="You are whytree.",
        question="Why?",
        history=_history(1, 10),
        retrieved="Previously: cell 12345 had interference.",
    )
    contents = [m.content for m in fitted.messages]
    assert contents[0] == "You are whytree."
    assert contents[1] == "Previously: cell 12345 had interference."
    assert contents[-1] == "Why?" and len(contents) == 5
    assert fitted.history_turns_dropped == 0
    assert fitted.tokens == prompt_tokens(fitted.messages, COUNT) <= 4000 - 800


def test_history_is_a_sliding_window_of_whole_turns() -> None:
    fitted = ContextBudget(4000).fit(system="sys", question="q", history=_history(40))
    kept = fitted.messages[1:-1]
    assert fitted.history_turns_dropped > 0
    assert kept[-1].content is not None and kept[-1].content.startswith("answer 39")
    assert kept[0].role == "user", "turns are never split"
    assert fitted.tokens <= fitted.limit


def test_budget_shifts_from_retrieval_to_history_as_the_analysis_progresses() -> None:
    budget = ContextBudget(4000)
    memory = "Previously for this user/project:\n" + "| an old incident line\n" * 400
    early = budget.fit(
        system="s", question="q", history=_history(30), retrieved=memory, steps=_steps(5)
    )
    late = budget.fit(
        system="s",
        question="q",
        history=_history(30),
        retrieved=memory,
        steps=_steps(5),
        progress=1.0,
    )
    assert "old incident" in (early.messages[1].content or "")
    assert "old incident" not in (late.messages[1].content or "")
    assert late.history_turns_dropped < early.history_turns_dropped


def test_steps_are_hierarchical_and_selective() -> None:
    steps = _steps(30, summary_words=40)
    fitted = ContextBudget(4000).fit(
        system="s", question="q", steps=steps, focus="h1", progress=0.9
    )
    context = fitted.messages[1].content or ""
    assert context.startswith("Analysis so far")
    assert "rows of step 30" in context and "rows of step 29" in context, "newest in full"
    assert "rows of step 28" in context, "the newest step of the focused group in full"
    assert "rows of step 5" not in context
    assert "[… truncated to fit the context budget" in context, "tool output cut with a note"
    assert "Steps 1–" in context and "summarised" in context, "oldest steps rolled up"
    assert fitted.steps_rolled_up > 0
    assert fitted.tokens <= fitted.limit


def test_huge_system_and_question_still_fit() -> None:
    budget = ContextBudget(1000, response_reserve=200)
    fitted = budget.fit(system="S" * 50_000, question="Q" * 50_000, history=_history(3))
    assert fitted.tokens <= 800
    assert (fitted.messages[0].content or "").startswith("SSS")
    assert (fitted.messages[-1].content or "").startswith("QQQ")


def test_pluggable_counter_is_used() -> None:
    budget = ContextBudget(600, response_reserve=100, counter=WordCounter())
    fitted = budget.fit(system="s", question="q", history=_history(50, 50))
    assert prompt_tokens(fitted.messages, WordCounter().count) <= 500
    assert fitted.history_turns_dropped > 0


def test_a_budget_without_room_for_a_prompt_is_refused() -> None:
    with pytest.raises(ValueError, match="LLM_CONTEXT_BUDGET_TOKENS=100"):
        ContextBudget(100, response_reserve=80)


_texts = st.text(max_size=4000)
_messages = st.lists(
    st.builds(ChatMessage, role=st.sampled_from(["user", "assistant"]), content=_texts),
    max_size=12,
)
_step_lists = st.lists(
    st.builds(
        Step,
        index=st.integers(0, 100),
        title=st.text(max_size=300),
        summary=st.text(max_size=300),
        detail=st.text(max_size=5000),
        group=st.sampled_from(["", "h1", "h2"]),
    ),
    max_size=12,
)


@given(
    total=st.integers(min_value=512, max_value=8000),
    reserve=st.one_of(st.none(), st.integers(min_value=0, max_value=440)),
    system=_texts,
    question=_texts,
    history=_messages,
    retrieved=_texts,
    steps=_step_lists,
    focus=st.sampled_from([None, "h1", "h2"]),
    progress=st.floats(allow_nan=True, allow_infinity=True),
)
def test_every_prompt_is_within_the_budget(  # noqa: PLR0917 - hypothesis arguments
    total: int,
    reserve: int | None,
    system: str,
    question: str,
    history: list[ChatMessage],
    retrieved: str,
    steps: list[Step],
    focus: str | None,
    progress: float,
) -> None:
    budget = ContextBudget(total, reserve)
    fitted = budget.fit(
        system=system,
        question=question,
        history=history,
        retrieved=retrieved,
        steps=steps,
        focus=focus,
        progress=progress,
    )
    assert prompt_tokens(fitted.messages, COUNT) <= budget.prompt_limit == fitted.limit
    assert fitted.messages[0].role == "system" and fitted.messages[-1].role == "user"


# --- session history ---------------------------------------------------------------


def _exchange(n: int, *, age: timedelta, size: int = 10) -> Exchange:
    finished = NOW - age
    return Exchange(
        session_id=1,
        user_id=1,
        chat_id=1,
        question=f"q{n}",
        answer=f"a{n}" + "x" * size,
        strategy="quick",
        confidence=0.9,
        started_at=finished - timedelta(seconds=2),
        finished_at=finished,
    )


def test_session_history_expires_and_is_bounded() -> None:
    exchanges = [_exchange(n, age=timedelta(hours=30 - n * 5)) for n in range(6)]
    # ages: 30h, 25h, 20h, 15h, 10h, 5h
    fresh = select_session_history(
        exchanges, now=NOW, ttl_sec=24 * 3600, max_exchanges=10, max_chars=10_000
    )
    assert [e.question for e in fresh] == ["q2", "q3", "q4", "q5"]
    fewer = select_session_history(
        exchanges, now=NOW, ttl_sec=24 * 3600, max_exchanges=2, max_chars=10_000
    )
    assert [e.question for e in fewer] == ["q4", "q5"]
    none = select_session_history(
        exchanges, now=NOW, ttl_sec=24 * 3600, max_exchanges=0, max_chars=10_000
    )
    assert none == []


def test_session_history_character_limit_keeps_the_newest() -> None:
    exchanges = [_exchange(n, age=timedelta(minutes=10 - n), size=100) for n in range(5)]
    kept = select_session_history(
        exchanges, now=NOW, ttl_sec=3600, max_exchanges=10, max_chars=250
    )
    assert [e.question for e in kept] == ["q3", "q4"]
    huge = [_exchange(0, age=timedelta(minutes=1), size=5000)]
    [cut] = select_session_history(huge, now=NOW, ttl_sec=3600, max_exchanges=5, max_chars=300)
    assert len(cut.question) + len(cut.answer) <= 300 and cut.answer.endswith("…")


def test_exchanges_become_history_turns() -> None:
    turns = history_messages([_exchange(0, age=timedelta(minutes=1))])
    assert [(m.role, m.content) for m in turns] == [("user", "q0"), ("assistant", "a0" + "x" * 10)]
