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
from reasoning_core.strategy.heuristic import decide_heuristically, normalise_text
from reasoning_core.strategy.llm_selector import LLMStrategySelector
from reasoning_core.understanding.catalogue import KnownNames
from reasoning_core.understanding.from_model import refine
from reasoning_core.understanding.request import Request

logger = logging.getLogger(__name__)

#: Attempts the rules decline before any model sees them: prompt injection, and asking
#: for secrets or the system prompt (understanding/exfiltration.py).
_DECLINED_BEFORE_ANY_MODEL = ("injection", "secret")

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
        request: Request,
        *,
        user_id: int,
        project: str,
        recent_entities: Sequence[str] = (),
        recent_context: Sequence[str] = (),
    ) -> tuple[StrategyDecision, Usage]:
        """The decision for a parsed question and the LLM usage it cost (zero without a call)."""
        decision, usage, _ = await self.decide_and_understand(
            request,
            user_id=user_id,
            project=project,
            recent_entities=recent_entities,
            recent_context=recent_context,
        )
        return decision, usage

    async def decide_and_understand(
        self,
        request: Request,
        *,
        user_id: int,
        project: str,
        recent_entities: Sequence[str] = (),
        recent_context: Sequence[str] = (),
        known: KnownNames | None = None,
    ) -> tuple[StrategyDecision, Usage, Request]:
        """The decision, its usage, and the request completed by the model's reading of it
        (the rules' request unchanged without a model call)."""
        if not self._enabled:
            return _disabled_decision(request), Usage(), request
        if self._llm is None or request.decline in _DECLINED_BEFORE_ANY_MODEL:
            decision = decide_heuristically(request, recent_entities=recent_entities)
            return decision, Usage(), request
        key = cache_key(request.text, user_id=user_id, project=project)
        cached = self._cache.get(key)
        if cached is not None:
            return cached.model_copy(update={"source": "cache"}), Usage(), request
        try:
            async with asyncio.timeout(self._timeout):
                decision, usage, parsed = await self._llm.decide(
                    request, recent_entities=recent_entities, recent_context=recent_context
                )
        except TimeoutError:
            logger.warning(
                "strategy: LLM timed out after %.1fs; using the heuristic", self._timeout
            )
            return _fallback(request, recent_entities, texts.LLM_TIMEOUT), Usage(), request
        except (LLMError, ValueError) as e:  # ValueError covers pydantic's ValidationError
            logger.warning("strategy: LLM path failed (%s); using the heuristic", _describe(e))
            return _fallback(request, recent_entities, texts.LLM_FAILED), Usage(), request
        self._cache.put(key, decision)
        return decision, usage, refine(request, parsed, known or KnownNames())


def _disabled_decision(request: Request) -> StrategyDecision:
    language = request.language
    return StrategyDecision(
        strategy="quick",
        confidence=0.5,
        reason=texts.REASONS["disabled"][language],
        uncertainty_reason=texts.REASONS["disabled"][language],
        restated_goal=normalise_text(request.text),
        language=language,
        source="heuristic",
    )


def _fallback(
    request: Request, recent_entities: Sequence[str], why: dict[texts.Lang, str]
) -> StrategyDecision:
    """The heuristic's decision, saying in its uncertainty why the LLM was not used."""
    decision = decide_heuristically(request, recent_entities=recent_entities)
    lang: texts.Lang = "ru" if decision.language == "ru" else "en"
    return decision.model_copy(update={"uncertainty_reason": why[lang]})


def _describe(error: Exception) -> str:
    """Class and a clipped message: our own errors carry no secrets or raw model output."""
    message = " ".join(str(error).split())[:_MAX_LOGGED_REASON]
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
