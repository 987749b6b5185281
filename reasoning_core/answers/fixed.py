"""Answers that need no reasoning: no LLM, an LLM failure, a decline."""

from __future__ import annotations

from reasoning_core.errors import LLMError, LLMTimeoutError
from reasoning_core.models import Answer, StrategyDecision

NO_LLM_TEXT = (
    "No language model is configured, so I can't answer free-form questions yet. "
    "Set OPENAI_API_KEY and LLM_MODEL (or OPENAI_BASE_URL for a local OpenAI-compatible "
    "server such as Ollama or vLLM) and restart whytree."
)


def no_llm_answer() -> Answer:
    return Answer(
        strategy="quick",
        text=NO_LLM_TEXT,
        confidence=0.0,
        uncertainty_reason="no language model is configured",
        error="llm_not_configured",
    )


def llm_failure_answer(error: LLMError) -> Answer:
    if isinstance(error, LLMTimeoutError):
        why, kind = "the language model did not answer in time", "llm_timeout"
    else:
        why, kind = "the language model returned an error or an unusable answer", "llm_error"
    return Answer(
        strategy="quick",
        text=f"Sorry — I couldn't answer this time: {why}. Please try again in a minute.",
        confidence=0.0,
        uncertainty_reason=why,
        error=kind,
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
    )


def deep_busy_answer(limit: int, decision: StrategyDecision) -> Answer:
    """The user already runs `limit` deep analyses (MAX_CONCURRENT_DEEP_PER_USER)."""
    noun = "analysis" if limit == 1 else "analyses"
    return Answer(
        strategy="deep",
        text=(
            f"⏳ You already have {limit} deep {noun} running (the limit per user). "
            "You can start another one as soon as it finishes."
        ),
        confidence=0.0,
        uncertainty_reason="the analysis was not started: too many are running",
        decision=decision,
        error="deep_busy",
    )
