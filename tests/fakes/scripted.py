"""ScriptedChatModel: a ChatModel test double for layers above the LLM adapter.

The OpenAI adapter itself is tested against the fake OpenAI server over real
HTTP (fake_servers/openai/server.py); higher layers may use this to script
replies with a function and inspect the calls it recorded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from reasoning_core.models import Usage
from reasoning_core.ports import ChatMessage, Completion, ToolSpec

Reply = Completion | str | Exception
Script = Callable[[Sequence[ChatMessage]], Reply | Awaitable[Reply]]


class ScriptedChatModel:
    """Answers each call with `script(messages)`: a Completion, a text, or an exception."""

    def __init__(self, script: Script) -> None:
        self._script = script
        self.calls: list[list[ChatMessage]] = []

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> Completion:
        self.calls.append(list(messages))
        reply = self._script(messages)
        if isinstance(reply, Awaitable):
            reply = await reply
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, str):
            return Completion(
                text=reply, usage=Usage(prompt_tokens=10, completion_tokens=5, llm_calls=1)
            )
        return reply
