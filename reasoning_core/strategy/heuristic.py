"""The heuristic strategy: rules over the parsed `Request` that choose quick / deep /
clarify / decline.

It serves when no LLM is configured and whenever the LLM path fails, so every
question still gets a decision. Its confidence never exceeds `HEURISTIC_MAX_CONFIDENCE`:
keyword rules are a fallback, not a judgement.
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import ClarifyingQuestion, Language, StrategyDecision, as_language
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

#: Why a question is declined, by the kind of request (`Request.decline`).
_DECLINE_REASONS: dict[str, str] = {
    "injection": N_(
        "I can't change my instructions or reveal them. I can answer questions or "
        "investigate an incident, e.g. why traffic dropped on a cell."
    ),
    "change": N_(
        "I only read data; I can't change or delete anything. I can analyse the "
        "data instead, e.g. explain why a metric changed on a cell or service."
    ),
    "command": N_(
        "I don't run commands or scripts. I can investigate an incident with "
        "read-only checks, or explain what a command does."
    ),
    "secret": N_(
        "I don't reveal passwords, tokens, keys, my instructions or other users' "
        "questions, and I don't dump whole tables. Ask your administrator for access; I can "
        "help with questions about the data."
    ),
    "attack": N_(
        "I don't help attack, break into or deceive anyone. I can explain how to "
        "protect against such attacks or investigate an incident."
    ),
}
_WHAT_OPTIONS = (N_("a cell (send its id)"), N_("a service"), N_("a host"), N_("a metric"))
_WHEN_OPTIONS = (
    N_("the last hour"),
    N_("since yesterday"),
    N_("the last 7 days"),
    N_("since a specific date"),
)
_SYMPTOM_OPTIONS = (
    N_("errors / 5xx"),
    N_("slow responses"),
    N_("a traffic drop"),
    N_("it is unavailable"),
)


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
            gettext(language, _DECLINE_REASONS[kind]),
            text,
            language,
        )
    if not any(ch.isalnum() for ch in text):
        return _clarify(text, language, signals, recent_entities, confidence=0.5)
    if request.intent == "diagnose":
        if signals.entities or _about_the_system(request):
            return _deep(text, language, signals)
        return _clarify(text, language, signals, recent_entities)
    return _quick(text, language, signals)


def _about_the_system(request: Request) -> bool:
    """An incident question that names no part, where the data's parts are known ("anything
    on fire?", "prod is slow"): the system is its subject, every part of it, so there is no
    "what should I look at?" to ask; the runbooks ask which one where several fit."""
    return request.system and bool(request.sole)


def clarifying_questions(
    request: Request, *, language: str | None = None, recent_entities: Sequence[str] = ()
) -> list[ClarifyingQuestion]:
    """Concrete questions for a diagnostic question that lacks details (1 to 3)."""
    lang = as_language(language or request.language)
    return _questions_for(lang, request.signals, recent_entities)


def _questions_for(
    lang: Language, signals: Signals, recent_entities: Sequence[str]
) -> list[ClarifyingQuestion]:
    questions: list[ClarifyingQuestion] = []
    if not signals.entities:
        recent = [e.strip()[:60] for e in recent_entities if e.strip()][:4]
        options = recent or _options(lang, _WHAT_OPTIONS)
        questions.append(
            ClarifyingQuestion(
                text=gettext(lang, "What should I look at?"), options=options, asks="subject"
            )
        )
    if not signals.symptom:
        questions.append(
            ClarifyingQuestion(
                text=gettext(lang, "What exactly looks wrong?"),
                options=_options(lang, _SYMPTOM_OPTIONS),
                asks="symptom",
            )
        )
    if not signals.time_hint:
        questions.append(
            ClarifyingQuestion(
                text=gettext(lang, "For which period?"),
                options=_options(lang, _WHEN_OPTIONS),
                asks="period",
            )
        )
    if not questions:  # names everything, yet judged too vague: ask what to look at
        questions.append(
            ClarifyingQuestion(
                text=gettext(lang, "What should I look at?"),
                options=_options(lang, _WHAT_OPTIONS),
                asks="subject",
            )
        )
    return questions[:3]


def _deep(text: str, language: Language, signals: Signals) -> StrategyDecision:
    strength = sum(
        (
            signals.causal or signals.analytic or signals.vague_incident,
            signals.symptom,
            signals.time_hint,
        )
    )
    entities = ", ".join(signals.entities[:3]) or gettext(language, "the whole system")
    reason = gettext(
        language,
        "A diagnostic question that names what to look at ({entities}): worth a deeper analysis.",
    ).format(entities=entities)
    return _decision("deep", 0.5 + 0.1 * strength, reason, text, language)


def _clarify(
    text: str,
    language: Language,
    signals: Signals,
    recent_entities: Sequence[str],
    *,
    confidence: float | None = None,
) -> StrategyDecision:
    if confidence is None:
        confidence = 0.45 + 0.1 * (signals.causal or signals.analytic) + 0.1 * signals.symptom
    decision = _decision(
        "clarify",
        confidence,
        gettext(
            language,
            "A diagnostic question that does not say what to look at: I need a few details first.",
        ),
        text,
        language,
    )
    questions = _questions_for(language, signals, recent_entities)
    return decision.model_copy(update={"questions": questions})


def _quick(text: str, language: Language, signals: Signals) -> StrategyDecision:
    if signals.social:
        return _decision(
            "quick",
            0.7,
            gettext(
                language, "Small talk or a question about the bot: a direct answer is enough."
            ),
            text,
            language,
        )
    if signals.framed_as_definition:
        return _decision(
            "quick",
            0.6,
            gettext(language, "A short factual or how-to question: a direct answer is enough."),
            text,
            language,
        )
    decision = _decision(
        "quick",
        0.45,
        gettext(language, "No incident or analysis request recognised: answering directly."),
        text,
        language,
    )
    return decision.model_copy(
        update={
            "uncertainty_reason": gettext(
                language, "Chosen by keyword rules; the question matched no clear pattern."
            )
        }
    )


def _decision(
    strategy: str, confidence: float, reason: str, text: str, language: Language
) -> StrategyDecision:
    confidence = round(min(confidence, HEURISTIC_MAX_CONFIDENCE), 2)
    uncertainty = (
        gettext(language, "Chosen by keyword rules, not by a language model.")
        if confidence < HEURISTIC_MAX_CONFIDENCE
        else None
    )
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


def _options(language: Language, options: Sequence[str]) -> list[str]:
    return [gettext(language, option) for option in options]
