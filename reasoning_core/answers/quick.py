"""The quick path: one LLM call returning {answer, confidence, uncertainty_reason}.

With an `AnswerStream`, the answer's text is shown while the model writes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field, field_validator

from reasoning_core.llm.streaming import partial_field
from reasoning_core.llm.structured import complete_json
from reasoning_core.models import UNCERTAINTY_THRESHOLD, Answer, Usage
from reasoning_core.ports import AnswerStream, ChatMessage, ChatModel, TextSink


class QuickReply(BaseModel):
    """What the model must return on the quick path."""

    answer: str = Field(min_length=1)
    confidence: float
    uncertainty_reason: str | None = None

    @field_validator("confidence")
    @classmethod
    def _clamp(cls, value: float) -> float:
        return min(1.0, max(0.0, value))


_NO_REASON = {
    "en": "the model gave a low confidence without saying why",
    "ru": "модель дала низкую уверенность, не объяснив почему",
}


async def answer_quickly(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    *,
    language: str = "en",
    stream: AnswerStream | None = None,
) -> Answer:
    """One structured call over prepared messages; raises LLMError subclasses on failure."""
    sink = answer_sink(stream) if stream is not None else None
    reply, usage = await complete_json(model, messages, QuickReply, on_text=sink)
    return quick_answer(reply.answer, reply.confidence, reply.uncertainty_reason, usage, language)


def quick_answer(
    text: str, confidence: float, uncertainty: str | None, usage: Usage, language: str
) -> Answer:
    """A quick answer as the model gave it; a low confidence always says why."""
    if confidence < UNCERTAINTY_THRESHOLD and not uncertainty:
        uncertainty = _NO_REASON["ru" if language == "ru" else "en"]
    return Answer(
        strategy="quick",
        text=text,
        confidence=confidence,
        uncertainty_reason=uncertainty,
        planner="llm",
        usage=usage,
    )


def answer_sink(
    stream: AnswerStream, *, field: str = "answer", when: Callable[[str], bool] | None = None
) -> TextSink:
    """A sink for the model's raw JSON that passes the growing `field` on to `stream`
    (only once `when(raw)` holds, if given), never the same text twice."""
    shown = ""

    async def on_text(raw: str) -> None:
        nonlocal shown
        if when is not None and not when(raw):
            return
        text = partial_field(raw, field)
        if text is None or text == shown or not text.strip():
            return
        shown = text
        await stream.partial(text)

    return on_text
