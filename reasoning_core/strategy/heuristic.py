"""The heuristic strategy: rules over the parsed `Request` that choose quick / deep /
clarify / decline.

It serves when no LLM is configured and whenever the LLM path fails, so every
question still gets a decision. Its confidence never exceeds `HEURISTIC_MAX_CONFIDENCE`:
keyword rules are a fallback, not a judgement.
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_core.models import ClarifyingQuestion, StrategyDecision
from reasoning_core.strategy import texts
from reasoning_core.strategy.texts import Lang
from reasoning_core.understanding.request import Request
from reasoning_core.understanding.signals import Signals

HEURISTIC_MAX_CONFIDENCE = 0.7
_DECLINE_CONFIDENCE = {
    "injection": 0.7,
    "change": 0.65,
    "command": 0.65,
    "secret": 0.65,
    "attack": 0.6,
}


def normalise_text(text: str) -> str:
    """The question with whitespace collapsed, clipped to the goal's maximum length."""
    return " ".join(text.split())[:1000]


def decide_heuristically(
    request: Request, *, recent_entities: Sequence[str] = ()
) -> StrategyDecision:
    """Choose a strategy for a parsed question by rules (source "heuristic", confidence <= 0.7).

    `recent_entities` (cells or services the user mentioned lately) become the
    suggested options when the question has to be clarified.
    """
    text, language, signals = request.text, request.language, request.signals
    kind = request.decline
    if kind is not None:
        return _decision(
            "decline",
            _DECLINE_CONFIDENCE[kind],
            texts.DECLINE_REASONS[kind][language],
            text,
            language,
        )
    if not any(ch.isalnum() for ch in text):
        return _clarify(text, language, signals, recent_entities, confidence=0.5)
    if request.intent == "diagnose":
        if signals.entities:
            return _deep(text, language, signals)
        return _clarify(text, language, signals, recent_entities)
    return _quick(text, language, signals)


def clarifying_questions(
    request: Request, *, language: str | None = None, recent_entities: Sequence[str] = ()
) -> list[ClarifyingQuestion]:
    """Concrete questions for a diagnostic question that lacks details (1 to 3)."""
    lang: Lang = "ru" if (language or request.language) == "ru" else "en"
    return _questions_for(lang, request.signals, recent_entities)


def _questions_for(
    lang: Lang, signals: Signals, recent_entities: Sequence[str]
) -> list[ClarifyingQuestion]:
    questions: list[ClarifyingQuestion] = []
    if not signals.entities:
        recent = [e.strip()[:60] for e in recent_entities if e.strip()][:4]
        options = recent or texts.WHAT_OPTIONS[lang]
        questions.append(
            ClarifyingQuestion(text=texts.WHAT_QUESTION[lang], options=options, asks="subject")
        )
    if not signals.symptom:
        questions.append(
            ClarifyingQuestion(
                text=texts.SYMPTOM_QUESTION[lang],
                options=texts.SYMPTOM_OPTIONS[lang],
                asks="symptom",
            )
        )
    if not signals.time_hint:
        questions.append(
            ClarifyingQuestion(
                text=texts.WHEN_QUESTION[lang], options=texts.WHEN_OPTIONS[lang], asks="period"
            )
        )
    if not questions:  # names everything, yet judged too vague: ask what to look at
        questions.append(
            ClarifyingQuestion(
                text=texts.WHAT_QUESTION[lang], options=texts.WHAT_OPTIONS[lang], asks="subject"
            )
        )
    return questions[:3]


def _deep(text: str, language: Lang, signals: Signals) -> StrategyDecision:
    strength = sum(
        (
            signals.causal or signals.analytic or signals.vague_incident,
            signals.symptom,
            signals.time_hint,
        )
    )
    entities = ", ".join(signals.entities[:3])
    reason = texts.REASONS["deep"][language].format(entities=entities)
    return _decision("deep", 0.5 + 0.1 * strength, reason, text, language)


def _clarify(
    text: str,
    language: Lang,
    signals: Signals,
    recent_entities: Sequence[str],
    *,
    confidence: float | None = None,
) -> StrategyDecision:
    if confidence is None:
        confidence = 0.45 + 0.1 * (signals.causal or signals.analytic) + 0.1 * signals.symptom
    decision = _decision("clarify", confidence, texts.REASONS["clarify"][language], text, language)
    questions = _questions_for(language, signals, recent_entities)
    return decision.model_copy(update={"questions": questions})


def _quick(text: str, language: Lang, signals: Signals) -> StrategyDecision:
    if signals.social:
        return _decision("quick", 0.7, texts.REASONS["social"][language], text, language)
    if signals.framed_as_definition:
        return _decision("quick", 0.6, texts.REASONS["definition"][language], text, language)
    decision = _decision("quick", 0.45, texts.REASONS["plain"][language], text, language)
    return decision.model_copy(update={"uncertainty_reason": texts.WEAK_SIGNAL[language]})


def _decision(
    strategy: str, confidence: float, reason: str, text: str, language: Lang
) -> StrategyDecision:
    confidence = round(min(confidence, HEURISTIC_MAX_CONFIDENCE), 2)
    uncertainty = texts.UNCERTAINTY[language] if confidence < HEURISTIC_MAX_CONFIDENCE else None
    return StrategyDecision.model_validate(
        {
            "strategy": strategy,
            "confidence": confidence,
            "reason": reason,
            "uncertainty_reason": uncertainty,
            "restated_goal": normalise_text(text),
            "language": language,
            "source": "heuristic",
        }
    )
