"""The LLM port: chat messages, tool calls and completions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from reasoning_core.models import (
    Usage,
)

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str  # raw JSON text, as the model wrote it


class ChatMessage(BaseModel):
    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None


class ToolSpec(BaseModel):
    """A function offered to the model (OpenAI function-calling shape)."""

    name: str
    description: str
    parameters: dict[str, Any]


class Completion(BaseModel):
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None


class ChatModel(Protocol):
    """A chat-completion model. Raises only `LLMError` subclasses.

    `json_mode` asks for a JSON object; `schema` (a JSON schema, implies `json_mode`) asks
    for one that fits it, in whichever way the server can be asked (or only in words).
    """

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> Completion: ...


#: Receives the model's text so far (growing; a retried call may start again shorter).
TextSink = Callable[[str], Awaitable[None]]


@runtime_checkable
class StreamingChatModel(ChatModel, Protocol):
    """A chat model that can hand out its text as it is generated.

    A server that cannot stream gives the complete reply: `on_text` is then called once.
    """

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        on_text: TextSink,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion: ...


class AnswerStream(Protocol):
    """Where a front end shows an answer while it is written (Telegram edits, a terminal)."""

    async def partial(self, text: str) -> None:
        """The answer's plain text so far; later calls carry more (or, after a retry, less)."""
        ...
