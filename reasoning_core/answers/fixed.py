"""Answers that need no reasoning: no LLM, an LLM failure, a failed analysis, a decline,
too many analyses.

Each is worded in the question's language (Russian or English). Failures say what the
user can do; their internals go to the log only, under an error id the user can quote to
an admin (reasoning_core/error_ids.py).
"""

from __future__ import annotations

from reasoning_core.errors import LLMError, LLMTimeoutError
from reasoning_core.models import Answer, Language, StrategyDecision, as_language

NO_LLM_TEXT = (
    "No language model is configured, so I can't answer free-form questions yet. "
    "Set OPENAI_API_KEY and LLM_MODEL (or OPENAI_BASE_URL for a local OpenAI-compatible "
    "server such as Ollama or vLLM) and restart whytree."
)

_WORDS: dict[Language, dict[str, str]] = {
    "en": {
        "no_llm": NO_LLM_TEXT,
        "no_llm_why": "no language model is configured",
        "busy_one": "⏳ You already have {limit} deep analysis running (the limit per user). "
        "You can start another one as soon as it finishes.",
        "busy_many": "⏳ You already have {limit} deep analyses running (the limit per user). "
        "You can start another one as soon as it finishes.",
        "busy_why": "the analysis was not started: too many are running",
    },
    "ru": {
        "no_llm": "Языковая модель не настроена, поэтому на вопросы в свободной форме я пока "
        "не отвечаю. Задайте OPENAI_API_KEY и LLM_MODEL (или OPENAI_BASE_URL для локального "
        "сервера, совместимого с OpenAI, например Ollama или vLLM) и перезапустите whytree.",
        "no_llm_why": "языковая модель не настроена",
        "busy_one": "⏳ У вас уже идёт глубокий анализ (не больше {limit} одновременно). "
        "Новый можно начать, как только он закончится.",
        "busy_many": "⏳ У вас уже идут глубокие анализы: {limit} (больше одновременно нельзя). "
        "Новый можно начать, как только один из них закончится.",
        "busy_why": "анализ не начат: одновременно идёт слишком много анализов",
    },
}


def no_llm_answer(language: str = "en") -> Answer:
    words = _WORDS[as_language(language)]
    return Answer(
        strategy="quick",
        text=words["no_llm"],
        confidence=0.0,
        uncertainty_reason=words["no_llm_why"],
        error="llm_not_configured",
        language=as_language(language),
    )


_LLM_WHY = {
    "llm_timeout": {
        "en": "the language model did not answer in time",
        "ru": "языковая модель не ответила вовремя",
    },
    "llm_error": {
        "en": "the language model returned an error or an unusable answer",
        "ru": "языковая модель вернула ошибку или непригодный ответ",
    },
}
_LLM_FAILED = {
    "en": "Sorry — I couldn't answer this time: {why}. Please try again in a minute.",
    "ru": "Извините, сейчас не получилось ответить: {why}. Попробуйте ещё раз через минуту.",
}
_DEEP_FAILED = {
    "en": (
        "Sorry — I could not finish the deep analysis (error {id}). Please try again in a few "
        "minutes; if it keeps failing, give your admin the error id {id}."
    ),
    "ru": (
        "Извините — глубокий анализ не удалось завершить (ошибка {id}). Попробуйте ещё раз "
        "через несколько минут; если не получится, сообщите администратору номер ошибки {id}."
    ),
}
_UNANSWERABLE = {
    "en": "Sorry — I could not finish the deep analysis: {why}.",
    "ru": "Извините — глубокий анализ не удалось довести до конца: {why}.",
}
_DEEP_FAILED_WHY = {
    "en": "the analysis could not finish (error {id})",
    "ru": "анализ не удалось завершить (ошибка {id})",
}


def _lang(language: str) -> str:
    return "ru" if language == "ru" else "en"


def llm_failure_answer(error: LLMError, language: str = "en") -> Answer:
    kind = "llm_timeout" if isinstance(error, LLMTimeoutError) else "llm_error"
    why = _LLM_WHY[kind][_lang(language)]
    return Answer(
        strategy="quick",
        text=_LLM_FAILED[_lang(language)].format(why=why),
        confidence=0.0,
        uncertainty_reason=why,
        error=kind,
        language=as_language(language),
    )


def unanswerable_answer(why: str, *, language: str, tree_id: str | None) -> Answer:
    """A deep analysis the question itself stopped (no data, no runbook): why, for the user."""
    return Answer(
        strategy="deep",
        text=_UNANSWERABLE[_lang(language)].format(why=why),
        confidence=0.0,
        uncertainty_reason=why,
        tree_id=tree_id,
        error="deep_failed",
        language=as_language(language),
    )


def deep_failure_answer(error_id: str, *, language: str, tree_id: str | None) -> Answer:
    """A deep analysis that failed: what to do and the error id; the details are logged."""
    lang = _lang(language)
    return Answer(
        strategy="deep",
        text=_DEEP_FAILED[lang].format(id=error_id),
        confidence=0.0,
        uncertainty_reason=_DEEP_FAILED_WHY[lang].format(id=error_id),
        tree_id=tree_id,
        error="deep_failed",
        language=as_language(language),
    )


def decline_answer(decision: StrategyDecision) -> Answer:
    """A short, polite reason and what to ask instead; no further LLM calls."""
    return Answer(
        strategy="decline",
        text=decision.reason,
        confidence=decision.confidence,
        uncertainty_reason=decision.uncertainty_reason,
        reason=decision.reason,
        decision=decision,
        language=as_language(decision.language),
    )


def deep_busy_answer(limit: int, decision: StrategyDecision) -> Answer:
    """The user already runs `limit` deep analyses (MAX_CONCURRENT_DEEP_PER_USER)."""
    language = as_language(decision.language)
    words = _WORDS[language]
    return Answer(
        strategy="deep",
        text=words["busy_one" if limit == 1 else "busy_many"].format(limit=limit),
        confidence=0.0,
        uncertainty_reason=words["busy_why"],
        decision=decision,
        error="deep_busy",
        language=language,
    )
