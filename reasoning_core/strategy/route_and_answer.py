"""Routing and answering in one model call, for messages the rules take for quick ones.

The model returns the strategy first, then (for "quick") the answer, then the rest
of a strategy decision and its parse of the message. A quick answer is streamed
while it is written; for any other strategy the answer is empty and the flow goes
on with the decision, as after a routing call. So a quick question costs one model
round trip instead of two.

The call is bounded twice: the model must have written its strategy within the
strategy's timeout (STRATEGY_TIMEOUT_SEC, as a routing call is), else the call is given
up and the rules decide; once it has, the answer may take as long as any model call
(LLM_TIMEOUT_SEC, the client's own bound) and `ROUTE_AND_ANSWER_MAX_TOKENS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import field_validator

from reasoning_core.answers.quick import answer_sink, quick_answer
from reasoning_core.llm.structured import complete_json
from reasoning_core.models import Answer, StrategyDecision, Usage
from reasoning_core.ports import AnswerStream, ChatMessage, ChatModel
from reasoning_core.strategy.llm_selector import (
    StrategyWire,
    build_messages,
    parse_confidence,
    to_decision,
)
from reasoning_core.understanding.from_model import ModelParse
from reasoning_core.understanding.request import Request

_STRATEGY = re.compile(r'"strategy"\s*:\s*"([^"]*)"')
_QUICK_WORDS = frozenset({"quick", "direct", "simple", "answer", "fast"})

#: The strategy decision's own bound (600, llm_selector) and room for a quick answer.
ROUTE_AND_ANSWER_MAX_TOKENS = 1200


class RouteAnswerWire(StrategyWire):
    """A strategy decision with the quick answer, as the model wrote it."""

    answer: str = ""
    answer_confidence: float | None = None
    answer_uncertainty_reason: str | None = None

    @field_validator("answer", mode="before")
    @classmethod
    def _answer(cls, value: Any) -> str:
        return "" if value is None else str(value)

    @field_validator("answer_confidence", mode="before")
    @classmethod
    def _answer_confidence(cls, value: Any) -> float | None:
        if value is None:
            return None
        try:
            return parse_confidence(value)
        except ValueError:
            return None

    @field_validator("answer_uncertainty_reason", mode="before")
    @classmethod
    def _answer_uncertainty(cls, value: Any) -> str | None:
        return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class RoutedAnswer:
    """The decision, its usage (the whole call), the model's parse and a quick answer."""

    decision: StrategyDecision
    usage: Usage
    parsed: ModelParse | None
    answer: Answer | None


def user_turn(
    request: Request, *, recent_entities: Sequence[str] = (), recent_context: Sequence[str] = ()
) -> str:
    """The user turn of the call: the routing call's (context, checked names, message)."""
    messages = build_messages(
        request, recent_entities=recent_entities, recent_context=recent_context
    )
    return messages[-1].content or request.text


async def route_and_answer(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    request: Request,
    *,
    recent_entities: Sequence[str] = (),
    stream: AnswerStream | None = None,
    decide_within: float | None = None,
    max_tokens: int | None = ROUTE_AND_ANSWER_MAX_TOKENS,
) -> RoutedAnswer:
    """One structured call; raises `LLMError` (and pydantic's `ValueError`) like routing,
    and `TimeoutError` when the model has not written its strategy within
    `decide_within` seconds (the call is cancelled then)."""
    decided = asyncio.Event()
    shown = answer_sink(stream, when=_quick_so_far) if stream is not None else None

    async def on_text(raw: str) -> None:
        if _STRATEGY.search(raw):
            decided.set()
        if shown is not None:
            await shown(raw)

    call = asyncio.ensure_future(
        complete_json(model, messages, RouteAnswerWire, max_tokens=max_tokens, on_text=on_text)
    )
    try:
        if decide_within is not None:
            await _strategy_in_time(call, decided, decide_within)
        wire, usage = await call
    finally:
        if not call.done():
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
    decision = to_decision(wire, request, recent_entities=recent_entities)
    answer = None
    if decision.strategy == "quick" and wire.answer.strip():
        confidence = wire.answer_confidence
        answer = quick_answer(
            wire.answer.strip(),
            confidence if confidence is not None else decision.confidence,
            wire.answer_uncertainty_reason,
            Usage(),  # the call's usage goes with the decision
            decision.language,
        )
    return RoutedAnswer(decision, usage, wire.request, answer)


async def _strategy_in_time(
    call: asyncio.Future[Any], decided: asyncio.Event, seconds: float
) -> None:
    """Return once the model has written its strategy (or the call has ended), or raise
    `TimeoutError` after `seconds` without either."""
    waiter = asyncio.ensure_future(decided.wait())
    try:
        done, _ = await asyncio.wait(
            {call, waiter}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        waiter.cancel()
    if not done:
        raise TimeoutError(f"the model wrote no strategy within {seconds:.1f}s")


def _quick_so_far(raw: str) -> bool:
    """The model has written its strategy, and it is quick: its answer may be shown."""
    match = _STRATEGY.search(raw)
    return match is not None and match.group(1).strip().lower() in _QUICK_WORDS
