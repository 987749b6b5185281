"""Scripts for the fake OpenAI server that tell whytree's prompt kinds apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_servers.openai.replies import Reply
from reasoning_core.llm import prompts

_PLANNER_PROMPTS = frozenset(
    {
        prompts.DEEP_HYPOTHESES_SYSTEM,
        prompts.DEEP_CHECKS_SYSTEM,
        prompts.DEEP_INTERPRET_SYSTEM,
        prompts.DEEP_SYNTHESIS_SYSTEM,
    }
)

Route = Reply | dict[str, Any] | Callable[[dict[str, Any]], Reply | dict[str, Any]]


def _system(request: dict[str, Any]) -> str:
    messages = request.get("messages") or [{}]
    return str(messages[0].get("content", ""))


def is_strategy_request(request: dict[str, Any]) -> bool:
    return _system(request).startswith(prompts.STRATEGY_SYSTEM[:80])


def is_route_and_answer_request(request: dict[str, Any]) -> bool:
    """The call that routes a likely quick question and answers it (a strategy request too)."""
    return _system(request) == prompts.ROUTE_AND_ANSWER_SYSTEM


def is_planner_request(request: dict[str, Any]) -> bool:
    """One of the LLM planner's prompts (deep analysis)."""
    return _system(request) in _PLANNER_PROMPTS


def decision(strategy: str, *, confidence: float = 0.9, **extra: Any) -> dict[str, Any]:
    """A strategy decision as the LLM would write it."""
    return {
        "strategy": strategy,
        "confidence": confidence,
        "reason": extra.pop("reason", f"looks like a {strategy} question"),
        "restated_goal": extra.pop("restated_goal", ""),
        "language": extra.pop("language", "en"),
        **extra,
    }


def routed(
    *, strategy: Route, answer: Route, deep: Route | None = None
) -> Callable[[dict[str, Any]], Reply | dict[str, Any]]:
    """Strategy prompts get `strategy`, planner prompts `deep` (if given), the rest `answer`."""

    def script(request: dict[str, Any]) -> Reply | dict[str, Any]:
        route = answer
        if is_strategy_request(request):
            route = strategy
        elif deep is not None and is_planner_request(request):
            route = deep
        return route(request) if callable(route) else route

    return script


def strategy_requests(requests: list[dict[str, Any]]) -> int:
    return sum(1 for r in requests if is_strategy_request(r))
