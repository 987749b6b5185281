"""The LLM path of strategy selection: one structured call, validated and repaired.

The model's JSON is read through a tolerant "wire" model: synonyms of a strategy,
confidence as a percentage or a word, questions as bare strings are accepted;
an unknown strategy is a validation error, so `complete_json` asks the model once
to repair it and then raises `LLMResponseError`. Converting the wire model into a
`StrategyDecision` clips long texts and fills gaps (a clarify without questions
gets the heuristic's questions), so nothing the model wrote reaches the user raw.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reasoning_core.i18n import gettext
from reasoning_core.llm import prompts
from reasoning_core.llm.structured import complete_json
from reasoning_core.models import (
    STRATEGIES,
    UNCERTAINTY_THRESHOLD,
    ClarifyingQuestion,
    Strategy,
    StrategyDecision,
    Usage,
)
from reasoning_core.ports import ChatMessage, ChatModel
from reasoning_core.strategy.heuristic import clarifying_questions, normalise_text
from reasoning_core.understanding.from_model import ModelParse
from reasoning_core.understanding.request import Request

_SYNONYMS: dict[str, Strategy] = {
    "direct": "quick",
    "simple": "quick",
    "answer": "quick",
    "fast": "quick",
    "analysis": "deep",
    "analyse": "deep",
    "analyze": "deep",
    "investigate": "deep",
    "tree": "deep",
    "clarification": "clarify",
    "clarifying": "clarify",
    "ask": "clarify",
    "question": "clarify",
    "refuse": "decline",
    "reject": "decline",
    "refusal": "decline",
    "deny": "decline",
}
_PERCENT_SCALE = 100
_CONFIDENCE_WORDS = {"high": 0.85, "medium": 0.6, "moderate": 0.6, "low": 0.3}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_LANGUAGE = re.compile(r"^[a-z]{2,3}(?:-[a-z]{2,4})?$")
_MAX_MESSAGE_CHARS = 4000
_MAX_CONTEXT_LINES = 6
_MAX_CONTEXT_LINE_CHARS = 300


class WireQuestion(BaseModel):
    """A clarifying question as the model wrote it."""

    model_config = ConfigDict(extra="ignore")

    text: str = ""
    options: list[str] = Field(default_factory=list)

    @field_validator("text", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return "" if value is None else str(value)

    @field_validator("options", mode="before")
    @classmethod
    def _options(cls, value: Any) -> list[str]:
        if not isinstance(value, list):
            return []
        return [str(v) for v in value if v is not None]


class StrategyWire(BaseModel):
    """The strategy decision as the model wrote it, before clipping and repair."""

    model_config = ConfigDict(extra="ignore")

    strategy: Strategy
    confidence: float = 0.5
    reason: str = ""
    uncertainty_reason: str | None = None
    restated_goal: str = ""
    language: str = ""
    questions: list[WireQuestion] = Field(default_factory=list)
    #: What the message asks, as the model reads it (merged into the rules' parse).
    request: ModelParse | None = None

    @field_validator("request", mode="before")
    @classmethod
    def _request(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else None

    @field_validator("strategy", mode="before")
    @classmethod
    def _strategy(cls, value: Any) -> str:
        word = str(value).strip().lower()
        if word in STRATEGIES:
            return word
        if word in _SYNONYMS:
            return _SYNONYMS[word]
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}")

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, value: Any) -> float:
        return parse_confidence(value)

    @field_validator("reason", "restated_goal", "language", mode="before")
    @classmethod
    def _plain_text(cls, value: Any) -> str:
        return "" if value is None else str(value)

    @field_validator("uncertainty_reason", mode="before")
    @classmethod
    def _optional_text(cls, value: Any) -> str | None:
        return None if value is None else str(value)

    @field_validator("questions", mode="before")
    @classmethod
    def _questions(cls, value: Any) -> list[Any]:
        if not isinstance(value, list):
            return []
        return [{"text": q} if isinstance(q, str) else q for q in value if q]


def parse_confidence(value: Any) -> float:
    """A confidence as models write it (0.85, "85%", "high", 85) as a number from 0 to 1."""
    if isinstance(value, bool) or value is None:
        raise ValueError("confidence must be a number from 0 to 1")
    if isinstance(value, str):
        word = value.strip().lower().rstrip("%")
        if word in _CONFIDENCE_WORDS:
            return _CONFIDENCE_WORDS[word]
        value = float(word) / _PERCENT_SCALE if value.strip().endswith("%") else float(word)
    number = float(value)
    if math.isnan(number):
        raise ValueError("confidence must be a number from 0 to 1")
    if 1 < number <= _PERCENT_SCALE and number.is_integer():  # "85" meant 85 %
        number /= _PERCENT_SCALE
    return min(1.0, max(0.0, number))


class LLMStrategySelector:
    """Asks the chat model for a strategy; raises `LLMError` when it cannot give one."""

    def __init__(self, model: ChatModel, *, max_tokens: int = 600) -> None:
        self._model = model
        self._max_tokens = max_tokens

    async def decide(
        self,
        request: Request,
        *,
        recent_entities: Sequence[str] = (),
        recent_context: Sequence[str] = (),
    ) -> tuple[StrategyDecision, Usage, ModelParse | None]:
        """One structured call: the decision (source "llm"), its usage, the model's parse."""
        messages = build_messages(
            request, recent_entities=recent_entities, recent_context=recent_context
        )
        wire, usage = await complete_json(
            self._model, messages, StrategyWire, max_tokens=self._max_tokens
        )
        return to_decision(wire, request, recent_entities=recent_entities), usage, wire.request


def build_messages(
    request: Request,
    *,
    recent_entities: Sequence[str] = (),
    recent_context: Sequence[str] = (),
) -> list[ChatMessage]:
    """The system prompt and the user turn: recent context (if any), then the message."""
    text = request.text
    lines = [_clip(line, _MAX_CONTEXT_LINE_CHARS) for line in recent_context if line.strip()]
    lines = lines[-_MAX_CONTEXT_LINES:]
    entities = [_clip(e, 60) for e in recent_entities if e.strip()][:8]
    if entities:
        lines.append("Recently mentioned: " + ", ".join(entities))
    if (checked := _checked_names(request)) is not None:
        lines.append(checked)
    context = prompts.STRATEGY_CONTEXT.format(lines="\n".join(lines)) if lines else ""
    user = prompts.STRATEGY_USER.format(context=context, message=text[:_MAX_MESSAGE_CHARS])
    return [
        ChatMessage(role="system", content=prompts.STRATEGY_SYSTEM),
        ChatMessage(role="user", content=user),
    ]


def _checked_names(request: Request) -> str | None:
    """The message's names as checked against the data, so the model need not guess."""
    checked = [
        f"{m.kind} {_clip(m.value, 60)} ({'in the data' if m.known else 'NOT in the data'})"
        for m in request.mentions
        if m.known is not None
    ]
    return "Names in the message, checked: " + ", ".join(checked[:8]) if checked else None


def to_decision(
    wire: StrategyWire, request: Request, *, recent_entities: Sequence[str] = ()
) -> StrategyDecision:
    """Clip, fill and check the model's answer into a `StrategyDecision` (source "llm")."""
    text = request.text
    language = _language(wire.language, request)
    uncertainty = _clip(wire.uncertainty_reason or "", 300) or None
    if uncertainty is None and wire.confidence < UNCERTAINTY_THRESHOLD:
        uncertainty = gettext(
            language, "The language model was not sure which way to handle this question."
        )
    questions: list[ClarifyingQuestion] = []
    if wire.strategy == "clarify":
        questions = _questions(wire.questions) or clarifying_questions(
            request, language=language, recent_entities=recent_entities
        )
    return StrategyDecision(
        strategy=wire.strategy,
        confidence=wire.confidence,
        reason=_clip(wire.reason, 300) or gettext(language, "Chosen by the language model."),
        uncertainty_reason=uncertainty,
        restated_goal=_clip(wire.restated_goal, 1000) or normalise_text(text),
        language=language,
        questions=questions,
        source="llm",
    )


def _questions(wire_questions: Sequence[WireQuestion]) -> list[ClarifyingQuestion]:
    questions = []
    for wq in wire_questions:
        text = _clip(wq.text, 300)
        if not text:
            continue
        options = list(dict.fromkeys(o for o in (_clip(o, 60) for o in wq.options) if o))
        questions.append(ClarifyingQuestion(text=text, options=options[:4]))
    return questions[:3]


def _language(code: str, request: Request) -> str:
    code = code.strip().lower()
    return code if _LANGUAGE.match(code) else request.language


def _clip(value: str, limit: int) -> str:
    """Control characters out, whitespace collapsed, cut at a word boundary with "…"."""
    flat = " ".join(_CONTROL.sub(" ", value).split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "…"
