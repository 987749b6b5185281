"""Instrumentation wrapped around the reasoning core at the composition root.

- `InstrumentedChatModel`: the `ChatModel` port around the real model; counts
  ``llm_requests_total{outcome}`` and ``llm_tokens_total{kind}``, and adds each
  call's usage to the current *usage owner*'s day (`UsageStore`).
- The usage owner is a context variable set per Telegram update (see
  bot/telegram/middlewares/access.py) or with `usage_owner(user_id)`. Tasks started from a handler
  inherit it, so a deep analysis running in the background still bills its user.
- `deferred_billing`: inside it (an update being answered) the first
  `DEFERRED_CALLS` calls are not billed one by one: `BilledTurnWriter` writes
  their usage with the exchange and the memory entry, in the same statement (one
  transaction after the model call). What is not written that way (no exchange, a
  failed write) is billed when the block ends; calls past `DEFERRED_CALLS` (a deep
  analysis) are billed as they come.
- `MeteredReasoningService`: `ReasoningService` whose event stream updates the
  metrics and logs one line per answered question.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from contextlib import aclosing, asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol, cast

from bot.operations.metrics import Metrics
from reasoning_core.errors import (
    LLMError,
    LLMHTTPError,
    LLMResponseError,
    LLMTimeoutError,
    StoreError,
)
from reasoning_core.events import AnswerEvent, Event
from reasoning_core.llm.streaming import complete_streamed
from reasoning_core.models import Answer, Question, Usage
from reasoning_core.ports import (
    AnswerStream,
    ChatMessage,
    ChatModel,
    Completion,
    Exchange,
    MemoryEntry,
    TextSink,
    ToolSpec,
    UsageStore,
)
from reasoning_core.service import Deps, ReasoningService

log = logging.getLogger(__name__)

_usage_owner: ContextVar[int | None] = ContextVar("whytree_usage_owner", default=None)


def current_usage_owner() -> int | None:
    """The user whose budget LLM calls made now are charged to, if any."""
    return _usage_owner.get()


@contextmanager
def usage_owner(user_id: int | None) -> Iterator[None]:
    """Charge LLM calls made inside the block (and tasks started in it) to `user_id`."""
    token = _usage_owner.set(user_id)
    try:
        yield
    finally:
        _usage_owner.reset(token)


#: Calls whose usage waits for the turn's write: a quick answer's strategy and answer.
DEFERRED_CALLS = 2


@dataclass
class _Bill:
    """Usage of `owner`'s calls not written yet; closed: calls are billed as they come."""

    owner: int
    usage: Usage = field(default_factory=Usage)
    open: bool = True


_bill: ContextVar[_Bill | None] = ContextVar("whytree_bill", default=None)


@asynccontextmanager
async def deferred_billing(usage: UsageStore, user_id: int) -> AsyncIterator[None]:
    """Hold back the billing of `user_id`'s first calls for the turn's write; what is
    still held at the end is billed then."""
    bill = _Bill(owner=user_id)
    token = _bill.set(bill)
    try:
        yield
    finally:
        _bill.reset(token)
        bill.open = False
        held, bill.usage = bill.usage, Usage()
        if held.llm_calls:
            try:
                await usage.add(user_id, held)
            except StoreError as e:
                log.error("could not record token usage of user %s: %s", user_id, e)


class UsageTurnWriter(Protocol):
    """A `TurnWriter` that can add token usage in the same write (storage/turns.py)."""

    async def write(
        self,
        exchange: Exchange | None,
        memory: MemoryEntry | None,
        *,
        usage: tuple[int, Usage] | None = None,
    ) -> None: ...


class BilledTurnWriter:
    """`TurnWriter` that writes the held-back usage (`deferred_billing`) with the turn."""

    def __init__(self, inner: UsageTurnWriter) -> None:
        self._inner = inner

    async def write(self, exchange: Exchange | None, memory: MemoryEntry | None) -> None:
        bill = _bill.get()
        if bill is None or not bill.open or not bill.usage.llm_calls:
            await self._inner.write(exchange, memory)
            return
        held, bill.usage = bill.usage, Usage()
        try:
            await self._inner.write(exchange, memory, usage=(bill.owner, held))
        except BaseException:
            bill.usage = bill.usage + held  # billed at the end of the block instead
            raise


def _outcome(error: LLMError) -> str:
    if isinstance(error, LLMTimeoutError):
        return "timeout"
    if isinstance(error, LLMHTTPError):
        return "http_error"
    if isinstance(error, LLMResponseError):
        return "bad_response"
    return "error"


class InstrumentedChatModel:
    """A `ChatModel` that measures and bills every call of the model it wraps."""

    def __init__(
        self, inner: ChatModel, *, metrics: Metrics, usage: UsageStore | None = None
    ) -> None:
        self._inner = inner
        self._metrics = metrics
        self._usage = usage

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> Completion:
        try:
            completion = await self._inner.complete(
                messages, json_mode=json_mode, tools=tools, max_tokens=max_tokens
            )
        except LLMError as e:
            self._metrics.observe_llm(_outcome(e))
            raise
        self._metrics.observe_llm("ok", completion.usage)
        await self._bill(completion.usage)
        return completion

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        on_text: TextSink,
        json_mode: bool = False,
        max_tokens: int | None = None,
    ) -> Completion:
        """Streamed when the wrapped model streams, else its complete reply at once."""
        try:
            completion = await complete_streamed(
                self._inner, messages, on_text=on_text, json_mode=json_mode, max_tokens=max_tokens
            )
        except LLMError as e:
            self._metrics.observe_llm(_outcome(e))
            raise
        self._metrics.observe_llm("ok", completion.usage)
        await self._bill(completion.usage)
        return completion

    async def _bill(self, usage: Usage) -> None:
        owner = current_usage_owner()
        if owner is None or self._usage is None:
            return
        call = Usage(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            llm_calls=1,
        )
        bill = _bill.get()
        if bill is not None and bill.open and bill.owner == owner:
            if bill.usage.llm_calls < DEFERRED_CALLS:
                bill.usage = bill.usage + call  # written with the turn
                return
            bill.open = False  # a long run (deep): bill what was held and go on as we come
            call, bill.usage = bill.usage + call, Usage()
        try:
            await self._usage.add(owner, call)
        except StoreError as e:  # the answer matters more than the bookkeeping
            log.error("could not record token usage of user %s: %s", owner, e)


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
