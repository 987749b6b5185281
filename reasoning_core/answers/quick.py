"""The quick path: one LLM call returning {answer, confidence, uncertainty_reason}."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, field_validator

from reasoning_core.llm.structured import complete_json
from reasoning_core.models import UNCERTAINTY_THRESHOLD, Answer
from reasoning_core.ports import ChatMessage, ChatModel


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
    model: ChatModel, messages: Sequence[ChatMessage], *, language: str = "en"
) -> Answer:
    """One structured call over prepared messages; raises LLMError subclasses on failure."""
    reply, usage = await complete_json(model, messages, QuickReply)
    uncertainty = reply.uncertainty_reason
    if reply.confidence < UNCERTAINTY_THRESHOLD and not uncertainty:
        uncertainty = _NO_REASON["ru" if language == "ru" else "en"]
    return Answer(
        strategy="quick",
        text=reply.answer,
        confidence=reply.confidence,
        uncertainty_reason=uncertainty,
        planner="llm",
        usage=usage,
    )
