"""The quick path: one LLM call; the answer in plain text, then one line saying how sure.

The model writes the answer as text and ends with a trailer line,
``CONFIDENCE: 0.8 | UNSURE: -``, instead of a JSON object. The answer is shown while
it is written, and JSON costs its framing (``{"answer": "``, three or four tokens)
before the first word and an escape for every quote and line break after it; models
also write prose worse inside a JSON string. A model that answers in JSON anyway is
read as before; one that leaves the trailer out gets a medium confidence that says so.

With an `AnswerStream`, the answer's text (never the trailer) is shown as it grows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from reasoning_core.errors import LLMResponseError
from reasoning_core.i18n import N_, gettext
from reasoning_core.llm.prompts import QUICK_REPAIR
from reasoning_core.llm.streaming import complete_streamed, partial_field
from reasoning_core.llm.structured import parse_answer
from reasoning_core.models import UNCERTAINTY_THRESHOLD, Answer, Usage
from reasoning_core.ports import AnswerStream, ChatMessage, ChatModel, Exchange, TextSink


class QuickReply(BaseModel):
    """A quick answer written as JSON (what a model may still send)."""

    answer: str = Field(min_length=1)
    confidence: float  # clamped to 0..1 by `quick_answer`, like the trailer's
    uncertainty_reason: str | None = None


#: The confidence given to an answer whose model did not say how sure it is.
UNSTATED_CONFIDENCE = 0.5

_NO_REASON = N_("the model gave a low confidence without saying why")
_UNSTATED = N_("the model did not say how sure it is")
_TRAILER_WORDS = ("confidence", "уверенность")
_TRAILER = re.compile(
    r"^\W*(?:confidence|уверенность)(?:[ _]\w+)?\W*[:=]"
    r"\s*(?P<value>\d+(?:[.,]\d+)?)\s*(?P<percent>%)?"
    r"(?:\W*(?:unsure|uncertain\w*(?:[ _]reason)?|не\s+уверен\w*)\W*[:=](?P<reason>.*))?$",
    re.IGNORECASE,
)
_JSON_START = re.compile(r'\s*\{\s*["}]')
_NO_REASON_WORDS = frozenset({"", "-", "—", "none", "null", "n/a", "нет"})
_TRAILER_LINES = 3  # the trailer is looked for among the last non-empty lines only
_PERCENT = 100.0


async def answer_quickly(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    *,
    language: str = "en",
    stream: AnswerStream | None = None,
) -> Answer:
    """One call over prepared messages; raises LLMError subclasses on failure."""
    if stream is None:
        completion = await model.complete(messages)
    else:
        sink = answer_sink(stream, read=visible_answer)
        completion = await complete_streamed(model, messages, on_text=sink)
    try:
        return read_quick_reply(completion.text, completion.usage, language)
    except LLMResponseError as e:
        reason = str(e)
    repair = [
        *messages,
        ChatMessage(role="assistant", content=completion.text),
        ChatMessage(role="user", content=QUICK_REPAIR.format(reason=reason)),
    ]
    second = await model.complete(repair)
    return read_quick_reply(second.text, completion.usage + second.usage, language)


def read_quick_reply(text: str, usage: Usage, language: str) -> Answer:
    """The answer in a model's reply: plain text with a trailer, or JSON; LLMResponseError
    when it is empty or JSON that does not parse or fit."""
    if _looks_like_json(text):
        reply = parse_answer(text, QuickReply)
        return quick_answer(
            reply.answer, reply.confidence, reply.uncertainty_reason, usage, language
        )
    body, confidence, reason = split_trailer(text)
    if not body:
        raise LLMResponseError("the answer was empty")
    if confidence is None:
        confidence = UNSTATED_CONFIDENCE
        reason = reason or gettext(language, _UNSTATED)
    return quick_answer(body, confidence, reason, usage, language)


def split_trailer(text: str) -> tuple[str, float | None, str | None]:
    """(answer, confidence, uncertainty reason) of a plain-text reply; the confidence is
    None when no trailer line is found among the last lines."""
    lines = text.strip().splitlines()
    filled = [i for i, line in enumerate(lines) if line.strip()]
    for index in reversed(filled[-_TRAILER_LINES:]):
        match = _TRAILER.match(lines[index].strip())
        if match is None:
            continue
        body = "\n".join(lines[:index] + lines[index + 1 :]).strip()
        return body, _confidence(match), _reason(match.group("reason"))
    return text.strip(), None, None


def visible_answer(raw: str) -> str | None:
    """What may be shown of a reply still being written: the text without its trailer
    (a last line that may be the trailer's start waits), or a JSON reply's answer field.

    None once the trailer is in: the answer is whole and follows at once as the final
    message, so showing it first would only cost a message and an edit (a reply that
    arrives in one piece is sent once)."""
    if _looks_like_json(raw):
        return partial_field(raw, "answer")
    body, confidence, _ = split_trailer(raw)
    if confidence is not None:
        return None
    done, _, last = raw.rpartition("\n")
    return split_trailer(done)[0] if _may_start_trailer(last) else body


def as_written(exchange: Exchange) -> str:
    """An earlier quick answer as the model wrote it, trailer included, for the history
    of the next quick call: a history of answers without the line would teach the model
    to leave it out."""
    if exchange.strategy != "quick" or exchange.error:
        return exchange.answer
    reason = " ".join((exchange.uncertainty_reason or "-").split())
    return f"{exchange.answer}\nCONFIDENCE: {exchange.confidence:.2f} | UNSURE: {reason}"


def quick_answer(
    text: str, confidence: float, uncertainty: str | None, usage: Usage, language: str
) -> Answer:
    """A quick answer as the model gave it; a low confidence always says why."""
    confidence = min(1.0, max(0.0, confidence))
    if confidence < UNCERTAINTY_THRESHOLD and not uncertainty:
        uncertainty = gettext(language, _NO_REASON)
    return Answer(
        strategy="quick",
        text=text,
        confidence=confidence,
        uncertainty_reason=uncertainty,
        planner="llm",
        usage=usage,
    )


def answer_sink(
    stream: AnswerStream,
    *,
    read: Callable[[str], str | None] = lambda raw: partial_field(raw, "answer"),
    when: Callable[[str], bool] | None = None,
) -> TextSink:
    """A sink for the model's raw text that passes what `read` finds in it (by default
    the growing JSON field "answer") on to `stream`, only once `when(raw)` holds, if
    given, and never the same text twice."""
    shown = ""

    async def on_text(raw: str) -> None:
        nonlocal shown
        if when is not None and not when(raw):
            return
        text = read(raw)
        if text is None or text == shown or not text.strip():
            return
        shown = text
        await stream.partial(text)

    return on_text


def _looks_like_json(text: str) -> bool:
    """The reply is (so far) a JSON object, bare or in a ```json fence; "{braces} are
    sets" is text."""
    start = text.lstrip()
    if start.startswith("```"):
        _, _, start = start.partition("\n")
        if not start.strip():
            return True  # only the fence so far
    return _JSON_START.match(start) is not None or start.strip() == "{"


def _may_start_trailer(line: str) -> bool:
    """The unfinished last line could still become the trailer ("Conf", "CONFIDENCE: 0.")."""
    start = line.strip().lstrip("*_[(`").lower()
    return bool(start) and any(w.startswith(start) or start.startswith(w) for w in _TRAILER_WORDS)


def _confidence(match: re.Match[str]) -> float:
    value = float(match.group("value").replace(",", "."))
    return value / _PERCENT if match.group("percent") or value > 1.0 else value


def _reason(raw: str | None) -> str | None:
    reason = (raw or "").strip().strip("*_`[]()").strip()
    return None if reason.lower().strip(".") in _NO_REASON_WORDS else reason
