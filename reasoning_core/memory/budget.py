"""The token budget of one LLM call, and the session history that goes into it.

`ContextBudget.fit` builds the messages of a call (system, retrieved memory and
step context, recent history, the question) inside LLM_CONTEXT_BUDGET_TOKENS
minus a reserve for the response. What does not fit is shed in a fixed way:

- the split between history and context shifts from retrieval towards history as
  a multi-step analysis progresses (`progress` 0..1);
- history is a sliding window of whole turns, newest first;
- steps are hierarchical: the newest (and the focused group's) with their
  output, older ones as one line each, the oldest rolled up into one line;
- every piece that is cut says so ("[… truncated …]"), tool outputs included.

Token counting is pluggable (`TokenCounter`); `EstimatingCounter` works offline
and errs on the high side. Whatever the inputs, the result is within budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from pydantic import BaseModel

from reasoning_core.memory.steps import Step, render_steps
from reasoning_core.memory.tokens import (
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    Count,
    EstimatingCounter,
    TokenCounter,
    message_tokens,
    prompt_tokens,
    truncate_to_tokens,
)
from reasoning_core.ports import ChatMessage, Exchange

__all__ = [
    "ContextBudget",
    "EstimatingCounter",
    "FittedPrompt",
    "Step",
    "TokenCounter",
    "history_messages",
    "prompt_tokens",
    "select_session_history",
    "truncate_to_tokens",
]

#: Below this many prompt tokens no useful prompt fits (system, question, overheads).
MIN_PROMPT_TOKENS = 64


class FittedPrompt(BaseModel):
    """The messages of one call and what had to give way."""

    messages: list[ChatMessage]
    tokens: int  # estimated prompt tokens, always <= limit
    limit: int  # total budget minus the response reserve
    history_turns_dropped: int = 0
    steps_rolled_up: int = 0


class ContextBudget:
    """Fits each prompt into `total_tokens - response_reserve` tokens.

    The reserve defaults to a fifth of the total (at least 256 tokens).
    """

    def __init__(
        self,
        total_tokens: int = 4000,
        response_reserve: int | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        reserve = max(256, total_tokens // 5) if response_reserve is None else response_reserve
        if reserve < 0 or total_tokens - reserve < MIN_PROMPT_TOKENS:
            raise ValueError(
                f"LLM_CONTEXT_BUDGET_TOKENS={total_tokens} leaves no room for a prompt after "
                f"a response reserve of {reserve} tokens (need {MIN_PROMPT_TOKENS} or more)"
            )
        self.total_tokens = total_tokens
        self.response_reserve = reserve
        self.counter: TokenCounter = counter or EstimatingCounter()

    @property
    def prompt_limit(self) -> int:
        return self.total_tokens - self.response_reserve

    def fit(
        self,
        *,
        system: str,
        question: str,
        history: Sequence[ChatMessage] = (),
        retrieved: str = "",
        steps: Sequence[Step] = (),
        focus: str | None = None,
        progress: float = 0.0,
    ) -> FittedPrompt:
        """System, context (retrieved memory + steps), history turns, question — in budget.

        `progress` (0..1, how far a multi-step analysis has gone) moves tokens from
        retrieved memory to history; `focus` names the step group shown in full.
        """
        count = self.counter.count
        progress = 0.0 if math.isnan(progress) else min(1.0, max(0.0, progress))
        available = self.prompt_limit - REPLY_PRIMING - 3 * MESSAGE_OVERHEAD
        system_text = truncate_to_tokens(system, int(available * 0.35), count)
        room = available - count(system_text)
        question_text = truncate_to_tokens(question, int(room * 0.5), count)
        flex = max(0, room - count(question_text))
        history_share = int(flex * (0.25 + 0.5 * progress))
        context_text, rolled = _context(
            retrieved, steps, focus, share=flex - history_share, progress=progress, count=count
        )
        turns, dropped = _window(history, flex - count(context_text), count)
        messages = [ChatMessage(role="system", content=system_text)]
        if context_text:
            messages.append(ChatMessage(role="system", content=context_text))
        messages += [*turns, ChatMessage(role="user", content=question_text)]
        messages = _enforce(messages, self.prompt_limit, count)
        return FittedPrompt(
            messages=messages,
            tokens=prompt_tokens(messages, count),
            limit=self.prompt_limit,
            history_turns_dropped=dropped,
            steps_rolled_up=rolled,
        )


def _context(
    retrieved: str,
    steps: Sequence[Step],
    focus: str | None,
    *,
    share: int,
    progress: float,
    count: Count,
) -> tuple[str, int]:
    """Retrieved memory (its share shrinking as the analysis progresses), then the steps."""
    retrieved_share = share if not steps else int(share * 0.5 * (1.0 - progress))
    memory = truncate_to_tokens(retrieved.strip(), retrieved_share, count)
    used = count(memory) + 1 if memory else 0
    step_text, rolled = render_steps(steps, focus, share - used, count)
    text = "\n\n".join(part for part in (memory, step_text) if part)
    return truncate_to_tokens(text, share, count), rolled


def _window(
    history: Sequence[ChatMessage], share: int, count: Count
) -> tuple[list[ChatMessage], int]:
    """The newest whole turns (a user message and what followed it) that fit in `share`."""
    turns = _turns(history)
    kept: list[list[ChatMessage]] = []
    left = share
    for turn in reversed(turns):
        cost = sum(message_tokens(m.content or "", count) for m in turn)
        if cost > left:
            break
        kept.append(turn)
        left -= cost
    kept.reverse()
    return [m for turn in kept for m in turn], len(turns) - len(kept)


def _turns(history: Sequence[ChatMessage]) -> list[list[ChatMessage]]:
    turns: list[list[ChatMessage]] = []
    for message in history:
        if message.role == "user" or not turns:
            turns.append([message])
        else:
            turns[-1].append(message)
    return turns


def _enforce(messages: list[ChatMessage], limit: int, count: Count) -> list[ChatMessage]:
    """The safety net: drop history (oldest first), then the context block, then cut the
    question and the system prompt."""
    head = 2 if len(messages) > 2 and messages[1].role == "system" else 1  # noqa: PLR2004
    while prompt_tokens(messages, count) > limit and len(messages) > head + 1:
        del messages[head]
    if prompt_tokens(messages, count) > limit and head == 2:  # noqa: PLR2004
        del messages[1]
    for index in (-1, 0):
        excess = prompt_tokens(messages, count) - limit
        if excess > 0:
            text = messages[index].content or ""
            cut = truncate_to_tokens(text, max(0, count(text) - excess), count)
            messages[index] = messages[index].model_copy(update={"content": cut})
    return messages


def select_session_history(
    exchanges: Sequence[Exchange],
    *,
    now: datetime,
    ttl_sec: int,
    max_exchanges: int,
    max_chars: int,
) -> list[Exchange]:
    """The recent exchanges worth sending: younger than `ttl_sec`, at most `max_exchanges`,
    newest first within `max_chars` (question + answer), returned oldest first.

    The newest exchange alone may exceed `max_chars`: its answer is then cut.
    """
    cutoff = now - timedelta(seconds=ttl_sec)
    fresh = [e for e in exchanges if e.finished_at >= cutoff][-max_exchanges:]
    if max_exchanges <= 0:
        fresh = []
    kept: list[Exchange] = []
    left = max_chars
    for exchange in reversed(fresh):
        size = len(exchange.question) + len(exchange.answer)
        if size > left:
            if not kept and left > len(exchange.question):
                cut = exchange.answer[: left - len(exchange.question) - 1] + "…"
                kept.append(exchange.model_copy(update={"answer": cut}))
            break
        kept.append(exchange)
        left -= size
    kept.reverse()
    return kept


def history_messages(
    exchanges: Sequence[Exchange], *, answer_of: Callable[[Exchange], str] | None = None
) -> list[ChatMessage]:
    """Exchanges as the user/assistant turns `ContextBudget.fit` takes as history; an
    assistant turn is `answer_of(exchange)` (the answer as stored, by default)."""
    messages: list[ChatMessage] = []
    for past in exchanges:
        messages.append(ChatMessage(role="user", content=past.question))
        answer = past.answer if answer_of is None else answer_of(past)
        messages.append(ChatMessage(role="assistant", content=answer))
    return messages
