"""A chat model watched from outside: each call's usage, complete or streamed, and each
failure go to hooks (the bot's metrics and billing, a benchmark's token count)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from reasoning_core.errors import LLMError
from reasoning_core.llm.streaming import complete_streamed
from reasoning_core.models import Usage
from reasoning_core.ports import ChatMessage, ChatModel, Completion, TextSink, ToolSpec

UsageHook = Callable[[Usage], Awaitable[None]]
ErrorHook = Callable[[LLMError], None]


class ObservedChatModel:
    """A `ChatModel` (and streaming one) that passes every call to `inner` and reports it."""

    def __init__(
        self, inner: ChatModel, *, on_usage: UsageHook, on_error: ErrorHook | None = None
    ) -> None:
        self._inner = inner
        self._on_usage = on_usage
        self._on_error = on_error

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> Completion:
        try:
            completion = await self._inner.complete(
                messages, json_mode=json_mode, schema=schema, tools=tools, max_tokens=max_tokens
            )
        except LLMError as e:
            self._failed(e)
            raise
        await self._on_usage(completion.usage)
        return completion

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        on_text: TextSink,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """Streamed when the wrapped model streams, else its complete reply at once."""
        try:
            completion = await complete_streamed(
                self._inner,
                messages,
                on_text=on_text,
                json_mode=json_mode,
                schema=schema,
                max_tokens=max_tokens,
            )
        except LLMError as e:
            self._failed(e)
            raise
        await self._on_usage(completion.usage)
        return completion

    def _failed(self, error: LLMError) -> None:
        if self._on_error is not None:
            self._on_error(error)
