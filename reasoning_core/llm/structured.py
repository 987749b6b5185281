"""JSON answers from a chat model, validated by pydantic, with one repair attempt.

The model is given the schema (the adapter asks in the best dialect its server takes).
Models asked for JSON still wrap it in ```json fences, think aloud in a
``<think>…</think>`` block first (reasoning models), put a sentence before it, or get a
field wrong. `complete_json` tolerates the first three and gives the model exactly one
chance to fix the rest: it shows the model its own output and the validation error and
asks for corrected JSON only. A second failure raises `LLMResponseError` with a short
reason that says what the model did (an HTML page, an empty answer, prose, ...), never
the raw output; both failures are logged in those words.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from reasoning_core.errors import LLMResponseError
from reasoning_core.llm.streaming import complete_streamed
from reasoning_core.models import Usage
from reasoning_core.ports import ChatMessage, ChatModel, Completion, TextSink

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_THINK_RE = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|$)", re.DOTALL | re.IGNORECASE)
_HTML_RE = re.compile(r"^\s*<(!doctype|html|head|body)\b", re.IGNORECASE)

_FENCE_RE = re.compile(r"```[a-zA-Z]*\s*(.*?)(?:```|$)", re.DOTALL)
_MAX_OBJECT_STARTS = 20  # how many "{"/"[" to try when prose precedes the JSON
_MAX_SCHEMA_CHARS = 3000
_MAX_REASON_CHARS = 300


async def complete_json(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    schema: type[T],
    *,
    max_tokens: int | None = None,
    on_text: TextSink | None = None,
) -> tuple[T, Usage]:
    """Ask `model` for JSON fitting `schema`; returns the object and the summed usage.

    With `on_text`, the first answer is streamed to it as it is written (the repair,
    if any, is not). Raises `LLMResponseError` when the answer is still invalid after
    one repair, and lets every other `LLMError` of the model through.
    """
    conversation = list(messages)
    shape = schema.model_json_schema()
    first: Completion
    if on_text is None:
        first = await model.complete(
            conversation, json_mode=True, schema=shape, max_tokens=max_tokens
        )
    else:
        first = await complete_streamed(
            model,
            conversation,
            on_text=on_text,
            json_mode=True,
            schema=shape,
            max_tokens=max_tokens,
        )
    try:
        return _parse(first, schema), first.usage
    except LLMResponseError as e:
        reason = str(e)
    log.warning("the LLM's %s answer is unusable (%s): asking once more", schema.__name__, reason)
    repair = [
        *conversation,
        ChatMessage(role="assistant", content=first.text),
        ChatMessage(role="user", content=_repair_prompt(reason, schema)),
    ]
    second = await model.complete(repair, json_mode=True, schema=shape, max_tokens=max_tokens)
    usage = first.usage + second.usage
    try:
        return _parse(second, schema), usage
    except LLMResponseError as e:
        log.warning("the LLM's repaired %s answer is unusable too (%s)", schema.__name__, e)
        raise LLMResponseError(
            f"the LLM answer did not fit {schema.__name__} after one repair: {e}"
        ) from e


def _parse(completion: Completion, schema: type[T]) -> T:
    if not completion.text.strip() and completion.tool_calls:
        names = ", ".join(sorted({c.name for c in completion.tool_calls}))[:80]
        raise LLMResponseError(f"the model called a tool ({names}) instead of answering in JSON")
    return parse_answer(completion.text, schema)


def parse_answer(text: str, schema: type[T]) -> T:
    """Extract the JSON in `text` and validate it; `LLMResponseError` (short reason) otherwise."""
    data = extract_json(text)
    try:
        return schema.model_validate(data)
    except ValidationError as e:
        raise LLMResponseError(_validation_reason(e)) from e


def extract_json(text: str) -> Any:
    """The JSON value in a model's answer: bare, fenced, after a ``<think>`` block or some
    prose. `LLMResponseError` says what the model did instead."""
    stripped = text.strip()
    if not stripped:
        raise LLMResponseError("the answer was empty")
    if _HTML_RE.match(stripped):
        raise LLMResponseError("the answer was an HTML page, not JSON")
    thought = _THINK_RE.search(stripped) is not None
    stripped = _THINK_RE.sub("", stripped).strip()
    if not stripped:
        raise LLMResponseError("the answer was a <think> block with no JSON after it")
    fence = _FENCE_RE.search(stripped)
    candidate = fence.group(1).strip() if fence else stripped
    try:
        return json.loads(candidate)
    except ValueError as e:
        first_error = e
    decoder = json.JSONDecoder()
    starts = [i for i, char in enumerate(candidate) if char in "{["][:_MAX_OBJECT_STARTS]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(candidate, start)
        except ValueError:
            continue
        return value
    if not starts:
        after = " after a <think> block" if thought else ""
        raise LLMResponseError(f"the answer was prose{after}, with no JSON in it")
    raise LLMResponseError(f"not valid JSON ({first_error})"[:_MAX_REASON_CHARS])


def _validation_reason(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:3]:
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        parts.append(f"{where}: {item['msg']}")
    more = error.error_count() - len(parts)
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)[:_MAX_REASON_CHARS]


def _repair_prompt(reason: str, schema: type[BaseModel]) -> str:
    shape = json.dumps(schema.model_json_schema(), separators=(",", ":"))
    return (
        f"Your previous answer could not be used: {reason}.\n"
        "Answer again with the corrected JSON object only: no prose, no code fences. "
        f"It must match this JSON schema:\n{shape[:_MAX_SCHEMA_CHARS]}"
    )
