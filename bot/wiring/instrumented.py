"""Instrumentation wrapped around the reasoning core at the composition root.

- `InstrumentedChatModel`: the `ChatModel` port around the real model; counts
  ``llm_requests_total{outcome}`` and ``llm_tokens_total{kind}``, and charges each
  call's usage to the current usage owner (bot/operations/billing.py `charge`).
- `MeteredReasoningService`: `ReasoningService` whose event stream updates the
  metrics and logs one line per answered question.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import cast

from bot.operations.billing import charge
from bot.operations.metrics import Metrics
from reasoning_core.errors import (
    LLMError,
    LLMHTTPError,
    LLMResponseError,
    LLMTimeoutError,
)
from reasoning_core.events import AnswerEvent, Event
from reasoning_core.llm.observed import ObservedChatModel
from reasoning_core.models import Answer, Question, Usage
from reasoning_core.ports import (
    AnswerStream,
    ChatModel,
    UsageStore,
)
from reasoning_core.service import Deps, ReasoningService

log = logging.getLogger(__name__)


def _outcome(error: LLMError) -> str:
    if isinstance(error, LLMTimeoutError):
        return "timeout"
    if isinstance(error, LLMHTTPError):
        return "http_error"
    if isinstance(error, LLMResponseError):
        return "bad_response"
    return "error"


class InstrumentedChatModel(ObservedChatModel):
    """A `ChatModel` that measures and bills every call of the model it wraps."""

    def __init__(
        self, inner: ChatModel, *, metrics: Metrics, usage: UsageStore | None = None
    ) -> None:
        async def measure_and_bill(spent: Usage) -> None:
            metrics.observe_llm("ok", spent)
            if usage is not None:
                await charge(usage, spent)

        super().__init__(
            inner,
            on_usage=measure_and_bill,
            on_error=lambda error: metrics.observe_llm(_outcome(error)),
        )


class MeteredReasoningService(ReasoningService):
    """`ReasoningService` whose events feed the metrics and the one-line-per-answer log."""

    def __init__(self, deps: Deps, *, metrics: Metrics) -> None:
        super().__init__(deps)
        self._metrics = metrics

    async def ask(
        self, question: Question, *, stream: AnswerStream | None = None
    ) -> AsyncIterator[Event]:
        started = time.monotonic()
        # ask() is an async generator: close it with ours, not whenever it is collected.
        inner = cast(AsyncGenerator[Event, None], super().ask(question, stream=stream))
        async with aclosing(inner) as events:
            async for event in events:
                self._metrics.observe_event(event)
                if isinstance(event, AnswerEvent):
                    seconds = time.monotonic() - started
                    self._metrics.observe_answer(event.answer, seconds)
                    _log_answer(question, event.answer, seconds)
                yield event


def _log_answer(question: Question, answer: Answer, seconds: float) -> None:
    log.info(
        "question answered",
        extra={
            "chat_id": question.chat_id,
            "user_id": question.user_id,
            "strategy": answer.strategy,
            "confidence": round(answer.confidence, 3),
            "tree_id": answer.tree_id,
            "duration_ms": round(seconds * 1000),
            "prompt_tokens": answer.usage.prompt_tokens,
            "completion_tokens": answer.usage.completion_tokens,
            "llm_calls": answer.usage.llm_calls,
            "error": answer.error,
        },
    )
