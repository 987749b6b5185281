"""Streamed completions, and the growing text of one JSON string field while it streams.

`complete_streamed` uses a model's `stream` when it has one and its complete reply
otherwise, so callers need not care. `partial_field` reads ``{"answer": "Hel`` as
``Hel``: the quick answer is JSON, yet its text can be shown as the model writes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from reasoning_core.ports import ChatMessage, ChatModel, Completion, StreamingChatModel, TextSink

_HEX = "0123456789abcdefABCDEF"
_UNICODE_ESCAPE = 6  # \uXXXX


async def complete_streamed(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    *,
    on_text: TextSink,
    json_mode: bool = False,
    schema: dict[str, Any] | None = None,
    max_tokens: int | None = None,
) -> Completion:
    """One completion whose text goes to `on_text` as it grows (at once without streaming)."""
    if isinstance(model, StreamingChatModel):
        return await model.stream(
            messages, on_text=on_text, json_mode=json_mode, schema=schema, max_tokens=max_tokens
        )
    completion = await model.complete(
        messages, json_mode=json_mode, schema=schema, max_tokens=max_tokens
    )
    await on_text(completion.text)
    return completion


def partial_field(text: str, name: str) -> str | None:
    """The value of string field `name` of the (possibly unfinished) JSON object in `text`,
    as far as it is written; None while the field has not started."""
    match = re.search(r'"' + re.escape(name) + r'"\s*:\s*"', text)
    if match is None:
        return None
    raw = _string_body(text, match.end())
    try:
        value = json.loads(f'"{raw}"')
    except ValueError:  # a malformed escape: show nothing rather than garbage
        return None
    if not isinstance(value, str):
        return None
    if value and "\ud800" <= value[-1] <= "\udbff":  # half a surrogate pair so far
        value = value[:-1]
    return value


def _string_body(text: str, start: int) -> str:
    """The JSON string body from `start` to its closing quote (or the end, without a cut
    escape sequence)."""
    index = start
    while index < len(text):
        char = text[index]
        if char == '"':
            return text[start:index]
        if char == "\\":
            width = _UNICODE_ESCAPE if text[index + 1 : index + 2] == "u" else 2
            escape = text[index : index + width]
            complete = len(escape) == width and (
                width == 2 or all(c in _HEX for c in escape[2:])  # noqa: PLR2004
            )
            if not complete:
                return text[start:index]
            index += width
            continue
        index += 1
    return text[start:]
