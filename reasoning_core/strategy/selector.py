"""StrategySelector: the one decision point every question passes through.

Order of precedence:

1. the layer is off (STRATEGY_ENABLED=false) -> quick, source "heuristic";
2. a prompt-injection or exfiltration attempt (secrets, the system prompt:
   ``exfiltration``) -> the heuristic's decline, without any LLM call (the
   message never reaches a model it tries to subvert); likewise every question the
   rules are sure of (`sure_of`: any decline, small talk, an incident question naming a
   cell, site or service the data has, with a symptom or a "why"): no routing call, so neither
   STRATEGY_TIMEOUT_SEC nor a model's confident mistake stands between it and its answer;
3. a cached decision of this user and project for the same goal -> source "cache";
4. no LLM configured -> the heuristic;
5. the LLM path under `timeout_sec`; a timeout, an `LLMError` or an invalid answer
   -> the heuristic, logged with the reason.

Only LLM decisions are cached. Heuristic decisions are cheap to recompute, and a
fallback caused by an LLM failure is deliberately not cached: failures are often
transient, and caching would pin the weaker heuristic answer for the whole TTL.
`decide` never raises for LLM trouble, so a user always gets a reply.

`route` is the service's entry: for a message the rules take for a quick one it costs
at most one model round trip. When the rules are confident (small talk, a definition
naming no cell, site or id; STRATEGY_RULES_FIRST) there is no routing call at all;
otherwise one call routes and, for "quick", answers too (route_and_answer). Other
messages get the routing call above, then their own path.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reasoning_core.errors import LLMError
from reasoning_core.i18n import N_, gettext
from reasoning_core.llm import prompts
from reasoning_core.models import Answer, StrategyDecision, Usage
from reasoning_core.ports import AnswerStream, ChatMessage, ChatModel
from reasoning_core.strategy.cache import DecisionCache, cache_key
from reasoning_core.strategy.heuristic import decide_heuristically, normalise_text
from reasoning_core.strategy.llm_selector import LLMStrategySelector
from reasoning_core.strategy.route_and_answer import RoutedAnswer, route_and_answer, user_turn
from reasoning_core.understanding.catalogue import KnownNames
from reasoning_core.understanding.from_model import refine
from reasoning_core.understanding.request import Request

logger = logging.getLogger(__name__)

#: Attempts the rules decline before any model sees them: prompt injection, and asking
#: for secrets or the system prompt (understanding/exfiltration.py).
_DECLINED_BEFORE_ANY_MODEL = ("injection", "secret")

_MAX_LOGGED_REASON = 200

#: The rules' quick decisions trusted without a routing call: small talk (0.7) and
#: definitions (0.6); a plain question (0.45) is routed by the model.
RULES_CONFIDENT = 0.6

#: Why the rules decided instead of the model (shown as the decision's uncertainty).
_LLM_TIMEOUT = N_("The language model did not answer in time; chosen by keyword rules.")
_LLM_FAILED = N_("The language model gave no usable answer; chosen by keyword rules.")
_DISABLED = N_("The strategy layer is off (STRATEGY_ENABLED=false): answering directly.")
_DECLINE_NOT_FOLLOWED = N_(
    "The language model wanted to decline; the rules see nothing to decline, so they chose."
)
_QUICK_NOT_FOLLOWED = N_(
    "The language model wanted a quick answer to an incident question; the rules chose."
)
_CLARIFY_NOT_FOLLOWED = N_(
    "The language model wanted to ask something else first; the rules have what they need."
)
_DEEP_NOT_FOLLOWED = N_(
    "The language model wanted to investigate before knowing what; the rules ask first."
)
_GENERAL_NOT_INVESTIGATED = N_(
    "The language model wanted to investigate a general question; the rules answer it."
)

#: Fits a system prompt and a user turn into the context budget with this turn's
#: history and recalled memory.
Fit = Callable[[str, str], Sequence[ChatMessage]]


@dataclass(frozen=True, slots=True)
class Routed:
    """How to answer, what it cost, the request as understood, and a quick answer
    when the routing call already gave one."""

    decision: StrategyDecision
    usage: Usage
    request: Request
    answer: Answer | None = None


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
        rules_first: bool = True,
    ) -> None:
        self._model = chat_model
        self._rules_first = rules_first
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
        rules = decide_heuristically(request, recent_entities=recent_entities)
        if (
            self._llm is None
            or request.decline in _DECLINED_BEFORE_ANY_MODEL
            or (self._rules_first and sure_of(request, rules))
        ):
            return rules, Usage(), request
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
            why = _LLM_TIMEOUT
        except (LLMError, ValueError) as e:  # ValueError covers pydantic's ValidationError
            logger.warning("strategy: LLM path failed (%s); using the heuristic", _describe(e))
            why = _LLM_FAILED
        else:
            understood = refine(request, parsed, known or KnownNames())
            overruled = _not_followed(decision, rules, request, understood)
            if overruled is None:
                self._cache.put(key, decision)
                return decision, usage, understood
            logger.info(
                "strategy: the model chose %s, the rules %s; the rules decide (%s)",
                decision.strategy,
                rules.strategy,
                overruled,
            )
            return _fallback(request, recent_entities, overruled), usage, request
        return _fallback(request, recent_entities, why), Usage(), request

    async def route(
        self,
        request: Request,
        *,
        user_id: int,
        project: str,
        fit: Fit,
        recent_entities: Sequence[str] = (),
        recent_context: Sequence[str] = (),
        known: KnownNames | None = None,
        stream: AnswerStream | None = None,
    ) -> Routed:
        """The decision as `decide_and_understand` gives it, in the fewest model round
        trips: for a message the rules take for quick, none or one that also answers."""
        rules = decide_heuristically(request, recent_entities=recent_entities)
        if self._enabled and self._rules_first and sure_of(request, rules):
            return Routed(rules, Usage(), request)  # no routing call: the rules are sure
        likely_quick = rules.strategy == "quick"
        cached = self._cache.get(cache_key(request.text, user_id=user_id, project=project))
        if not (self._enabled and self._model is not None and likely_quick) or cached:
            decision, usage, request = await self.decide_and_understand(
                request,
                user_id=user_id,
                project=project,
                recent_entities=recent_entities,
                recent_context=recent_context,
                known=known,
            )
            return Routed(decision, usage, request)
        names_only = all(m.kind == "name" for m in request.mentions)  # no cell, site, id...
        if self._rules_first and rules.confidence >= RULES_CONFIDENT and names_only:
            return Routed(rules, Usage(), request)
        turn = user_turn(request, recent_entities=recent_entities, recent_context=recent_context)
        routed = await self._route_and_answer(
            fit(prompts.ROUTE_AND_ANSWER_SYSTEM, turn), request, recent_entities, stream
        )
        if isinstance(routed, str):  # the call failed: the rules decide
            return Routed(_fallback(request, recent_entities, routed), Usage(), request)
        overruled = _not_followed(routed.decision, rules, request, request)
        if overruled is not None:
            logger.info(
                "strategy: the model chose %s, the rules %s; the rules decide",
                routed.decision.strategy,
                rules.strategy,
            )
            decision = _fallback(request, recent_entities, overruled)
            return Routed(decision, routed.usage, request)
        key = cache_key(request.text, user_id=user_id, project=project)
        self._cache.put(key, routed.decision)
        parsed = refine(request, routed.parsed, known or KnownNames())
        return Routed(routed.decision, routed.usage, parsed, routed.answer)

    async def _route_and_answer(
        self,
        messages: Sequence[ChatMessage],
        request: Request,
        recent_entities: Sequence[str],
        stream: AnswerStream | None,
    ) -> RoutedAnswer | str:
        """The model's routed answer, or why the rules decide instead (timeout, failure)."""
        assert self._model is not None  # route() asks only with a model
        try:
            return await route_and_answer(
                self._model,
                messages,
                request,
                recent_entities=recent_entities,
                stream=stream,
                decide_within=self._timeout,
            )
        except TimeoutError:
            logger.warning(
                "strategy: the model wrote no strategy within %.1fs; using the rules",
                self._timeout,
            )
            return _LLM_TIMEOUT
        except (LLMError, ValueError) as e:  # the quick call that follows may still work
            logger.warning("strategy: route-and-answer failed (%s); using the rules", _describe(e))
            return _LLM_FAILED


def sure_of(request: Request, rules: StrategyDecision) -> bool:
    """Whether the rules' decision stands without asking a model: a decline, small talk,
    or a diagnostic question (a symptom, or asking why or what happened) that names a
    cell, site or service the data has (or, without a list of names, names one after its
    kind word: "cell 10291")."""
    if rules.strategy == "decline":
        return True
    signals = request.signals
    if rules.strategy == "quick":
        return signals.social and not signals.symptom
    asks_why = signals.causal or signals.analytic or signals.vague_incident
    if rules.strategy != "deep" or not (signals.symptom or asks_why):
        return False
    return _names_known(request)


def _not_followed(
    decision: StrategyDecision, rules: StrategyDecision, request: Request, understood: Request
) -> str | None:
    """Why the model's decision is not followed (None: it is). The model may choose where
    the rules are unsure, never in a direction that makes the answer worse (`request` is
    the rules' reading, `understood` the model's added to it). Not followed:

    - a decline of what the rules see nothing to decline in;
    - a quick answer to an incident question (a symptom, a why, "check 10331") the rules
      would investigate or clarify: it runs no check and could only guess;
    - a clarifying question about a general question the rules answer (the answer may say
      what it assumes; a question about how things work or what usually causes a symptom
      is general though it names the symptom), or about an incident question whose
      subject this message names;
    - a clarifying question instead of the rules' about a name the data lacks (theirs
      offers the names it has);
    - a deep analysis where the rules would ask first and neither reading names the thing,
      or of a general question ("what is RTWP?"): there is nothing to check.
    """
    signals = request.signals
    asks_why = signals.causal or signals.analytic or signals.vague_incident
    incident = request.intent == "diagnose" or signals.symptom or asks_why
    # named in this message (not only earlier: "it's broken again" may mean another thing)
    named = not request.refers_back and any(m.kind != "name" for m in request.mentions)
    # "how does CPU throttling work", "typical reasons a cell loses traffic": knowledge
    knowledge = (signals.framed_as_definition or signals.in_general) and not _names_known(request)
    general = not incident or knowledge
    unknown = any(m.known is False for m in request.mentions)
    blind = not _names_known(understood)
    model, own = decision.strategy, rules.strategy
    vetoes = (
        (_declines_alone(decision, rules), _DECLINE_NOT_FOLLOWED),
        (model == "quick" and own in ("deep", "clarify") and incident, _QUICK_NOT_FOLLOWED),
        (model == "clarify" and own == "quick" and general, _CLARIFY_NOT_FOLLOWED),
        (model == "clarify" and own == "deep" and incident and named, _CLARIFY_NOT_FOLLOWED),
        (model == "clarify" and own == "clarify" and unknown, _CLARIFY_NOT_FOLLOWED),
        (model == "deep" and own == "clarify" and blind, _DEEP_NOT_FOLLOWED),
        (model == "deep" and own == "quick" and knowledge, _GENERAL_NOT_INVESTIGATED),
    )
    return next((why for vetoed, why in vetoes if vetoed), None)


def _names_known(request: Request) -> bool:
    """Whether the question (as the rules and the model read it) names a cell, site or
    service the data has (or, without a list of names, one after its kind word)."""
    return any(
        m.kind != "name" and (m.known is True or (m.known is None and m.labelled))
        for m in request.mentions
    )


def _declines_alone(decision: StrategyDecision, rules: StrategyDecision) -> bool:
    """A model's decline of a message the rules see nothing to decline in: not followed.
    What whytree declines (changes, commands, secrets, attacks, injection) the rules
    recognise before any model; a model that declines more is over-cautious or subverted."""
    return decision.strategy == "decline" and rules.strategy != "decline"


def _disabled_decision(request: Request) -> StrategyDecision:
    language = request.language
    return StrategyDecision(
        strategy="quick",
        confidence=0.5,
        reason=gettext(language, _DISABLED),
        uncertainty_reason=gettext(language, _DISABLED),
        restated_goal=normalise_text(request.text),
        language=language,
        source="heuristic",
    )


def _fallback(request: Request, recent_entities: Sequence[str], why: str) -> StrategyDecision:
    """The heuristic's decision, saying in its uncertainty why the LLM was not used."""
    decision = decide_heuristically(request, recent_entities=recent_entities)
    return decision.model_copy(update={"uncertainty_reason": gettext(decision.language, why)})


def _describe(error: Exception) -> str:
    """Class and a clipped message: our own errors carry no secrets or raw model output."""
    message = " ".join(str(error).split())[:_MAX_LOGGED_REASON]
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
