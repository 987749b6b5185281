"""The LLM port: chat messages, tool calls and completions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

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
    """A chat-completion model. Raises only `LLMError` subclasses."""

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> Completion: ...
