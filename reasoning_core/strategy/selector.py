"""StrategySelector: the one decision point every question passes through.

Order of precedence:

1. the layer is off (STRATEGY_ENABLED=false) -> quick, source "heuristic";
2. a prompt-injection or exfiltration attempt (secrets, the system prompt:
   ``exfiltration``) -> the heuristic's decline, without any LLM call (the
   message never reaches a model it tries to subvert);
3. a cached decision of this user and project for the same goal -> source "cache";
4. no LLM configured -> the heuristic;
5. the LLM path under `timeout_sec`; a timeout, an `LLMError` or an invalid answer
   -> the heuristic, logged with the reason.

Only LLM decisions are cached. Heuristic decisions are cheap to recompute, and a
fallback caused by an LLM failure is deliberately not cached: failures are often
transient, and caching would pin the weaker heuristic answer for the whole TTL.
`decide` never raises for LLM trouble, so a user always gets a reply.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence

from reasoning_core.errors import LLMError
from reasoning_core.models import StrategyDecision, Usage
from reasoning_core.ports import ChatModel
from reasoning_core.strategy import texts
from reasoning_core.strategy.cache import DecisionCache, cache_key
from reasoning_core.strategy.exfiltration import exfiltration_kind
from reasoning_core.strategy.heuristic import (
    decide_heuristically,
    detect_language,
    normalise_text,
)
from reasoning_core.strategy.heuristic_rules import decline_kind
from reasoning_core.strategy.lexicon import fold
from reasoning_core.strategy.llm_selector import LLMStrategySelector

logger = logging.getLogger(__name__)

_MAX_LOGGED_REASON = 200


class StrategySelector:
    """Decides quick / deep / clarify / decline for a question, never failing for LLM trouble."""

    def __init__(
        self,
        *,
        chat_model: ChatModel | None,
        enabled: bool,
        timeout_sec: float,
        cache_ttl_sec: int,
        cache_size: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._llm = LLMStrategySelector(chat_model) if chat_model is not None else None
        self._enabled = enabled
        self._timeout = timeout_sec
        self._cache = DecisionCache(ttl_sec=cache_ttl_sec, max_size=cache_size, clock=clock)

    async def decide(
        self,
        text: str,
        *,
        user_id: int,
        project: str,
        recent_entities: Sequence[str] = (),
        recent_context: Sequence[str] = (),
    ) -> tuple[StrategyDecision, Usage]:
        """The decision for `text` and the LLM usage it cost (zero without an LLM call)."""
        if not self._enabled:
            return _disabled_decision(text), Usage()
        if self._llm is None or _declined_by_rules(fold(text)):
            return decide_heuristically(text, recent_entities=recent_entities), Usage()
        key = cache_key(text, user_id=user_id, project=project)
        cached = self._cache.get(key)
        if cached is not None:
            return cached.model_copy(update={"source": "cache"}), Usage()
        try:
            async with asyncio.timeout(self._timeout):
                decision, usage = await self._llm.decide(
                    text, recent_entities=recent_entities, recent_context=recent_context
                )
        except TimeoutError:
            logger.warning(
                "strategy: LLM timed out after %.1fs; using the heuristic", self._timeout
            )
            return _fallback(text, recent_entities, texts.LLM_TIMEOUT), Usage()
        except (LLMError, ValueError) as e:  # ValueError covers pydantic's ValidationError
            logger.warning("strategy: LLM path failed (%s); using the heuristic", _describe(e))
            return _fallback(text, recent_entities, texts.LLM_FAILED), Usage()
        self._cache.put(key, decision)
        return decision, usage


def _declined_by_rules(folded: str) -> bool:
    """Attempts the rules decline before any model sees them."""
    return decline_kind(folded) == "injection" or exfiltration_kind(folded) is not None


def _disabled_decision(text: str) -> StrategyDecision:
    language = detect_language(text)
    return StrategyDecision(
        strategy="quick",
        confidence=0.5,
        reason=texts.REASONS["disabled"][language],
        uncertainty_reason=texts.REASONS["disabled"][language],
        restated_goal=normalise_text(text),
        language=language,
        source="heuristic",
    )


def _fallback(
    text: str, recent_entities: Sequence[str], why: dict[texts.Lang, str]
) -> StrategyDecision:
    """The heuristic's decision, saying in its uncertainty why the LLM was not used."""
    decision = decide_heuristically(text, recent_entities=recent_entities)
    lang: texts.Lang = "ru" if decision.language == "ru" else "en"
    return decision.model_copy(update={"uncertainty_reason": why[lang]})


def _describe(error: Exception) -> str:
    """Class and a clipped message: our own errors carry no secrets or raw model output."""
    message = " ".join(str(error).split())[:_MAX_LOGGED_REASON]
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
