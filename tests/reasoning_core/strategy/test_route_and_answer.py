"""`StrategySelector.route`: a quick question in at most one model round trip."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from fake_servers.openai.replies import Reply as ServerReply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.errors import LLMHTTPError
from reasoning_core.llm import prompts
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.ports import ChatMessage
from reasoning_core.strategy.route_and_answer import ROUTE_AND_ANSWER_MAX_TOKENS
from reasoning_core.strategy.selector import Routed, StrategySelector
from reasoning_core.understanding import understand
from tests.fakes.scripted import Reply, ScriptedChatModel

PLAIN = "Tell me about DNS resolvers"  # the rules lean quick, but not surely


def _fit(system: str, question: str) -> list[ChatMessage]:
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=question)]


def _selector(model: ScriptedChatModel, *, rules_first: bool = True) -> StrategySelector:
    return StrategySelector(
        chat_model=model,
        enabled=True,
        timeout_sec=5,
        cache_ttl_sec=60,
        cache_size=10,
        rules_first=rules_first,
    )


async def selector_route(selector: StrategySelector, text: str) -> Routed:
    return await selector.route(understand(text), user_id=1, project="default", fit=_fit)


def _model(reply: dict[str, object] | Exception) -> ScriptedChatModel:
    def script(messages: Sequence[ChatMessage]) -> Reply:
        assert messages[0].content == prompts.ROUTE_AND_ANSWER_SYSTEM
        return reply if isinstance(reply, Exception) else json.dumps(reply)

    return ScriptedChatModel(script)


async def test_a_definition_the_rules_are_sure_of_needs_no_routing_call() -> None:
    model = _model(RuntimeError("no call expected"))
    routed = await selector_route(_selector(model), "What is DNS?")
    assert model.calls == []
    assert routed.decision.strategy == "quick"
    assert routed.decision.source == "heuristic"
    assert routed.answer is None, "the quick call follows"


async def test_one_call_routes_and_answers_and_the_decision_is_cached() -> None:
    model = _model(
        {
            "strategy": "quick",
            "answer": "Resolvers look names up.",
            "answer_confidence": 0.8,
            "confidence": 0.9,
            "request": {"intent": "explain"},
        }
    )
    selector = _selector(model)
    routed = await selector_route(selector, PLAIN)
    assert len(model.calls) == 1
    assert routed.decision.source == "llm"
    assert routed.answer is not None
    assert routed.answer.text == "Resolvers look names up."
    assert routed.answer.confidence == 0.8
    assert routed.usage.llm_calls == 1
    again = await selector_route(selector, PLAIN)
    assert len(model.calls) == 1, "the cache still applies"
    assert again.decision.source == "cache"
    assert again.answer is None


async def test_another_strategy_leaves_the_answer_empty() -> None:
    model = _model({"strategy": "deep", "answer": "", "confidence": 0.7})
    routed = await selector_route(_selector(model), PLAIN)
    assert routed.decision.strategy == "deep"
    assert routed.answer is None


async def test_a_failed_call_falls_back_to_the_rules() -> None:
    model = _model(LLMHTTPError("down", status=503))
    routed = await selector_route(_selector(model), PLAIN)
    assert routed.decision.source == "heuristic"
    assert routed.decision.strategy == "quick"
    assert routed.answer is None


async def test_without_rules_first_a_definition_is_routed_by_the_model() -> None:
    model = _model({"strategy": "quick", "answer": "A naming system.", "confidence": 0.9})
    routed = await selector_route(_selector(model, rules_first=False), "What is DNS?")
    assert len(model.calls) == 1
    assert routed.answer is not None
    assert routed.answer.confidence == 0.9, "no answer_confidence: the routing confidence"


async def test_a_diagnostic_question_the_rules_are_unsure_of_keeps_the_routing_call() -> None:
    def script(messages: Sequence[ChatMessage]) -> Reply:
        assert messages[0].content == prompts.STRATEGY_SYSTEM
        return json.dumps({"strategy": "deep", "confidence": 0.9})

    model = ScriptedChatModel(script)
    routed = await selector_route(_selector(model), "Why is the checkout slow since Monday?")
    assert len(model.calls) == 1
    assert routed.decision.strategy == "deep" and routed.decision.source == "llm"


async def test_a_question_the_rules_are_sure_of_makes_no_routing_call() -> None:
    """A cell named after its kind word and a symptom: deep, whatever a model would say."""
    model = _model({"strategy": "decline", "confidence": 0.97, "reason": "nothing is wrong"})
    routed = await selector_route(_selector(model), "Why did traffic drop on cell 10291?")
    assert model.calls == []
    assert routed.decision.strategy == "deep" and routed.decision.source == "heuristic"


# Over real HTTP: the OpenAI client and a fake server that writes at a set pace.

_ROUTED_QUICK = {
    "strategy": "quick",
    "answer": "Resolvers look names up, " + "and cache what they found " * 12,
    "answer_confidence": 0.8,
    "confidence": 0.9,
}


async def _route_over_http(
    server: FakeOpenAIServer, *, strategy_timeout: float
) -> tuple[Routed, float]:
    chat = OpenAIChatModel(base_url=server.base_url, api_key="test", model="fake", timeout=30)
    selector = StrategySelector(
        chat_model=chat,
        enabled=True,
        timeout_sec=strategy_timeout,
        cache_ttl_sec=60,
        cache_size=10,
    )
    started = time.monotonic()
    try:
        routed = await selector_route(selector, PLAIN)
    finally:
        await chat.aclose()
    return routed, time.monotonic() - started


async def test_the_answer_may_outlast_the_strategy_timeout_once_the_strategy_is_written() -> None:
    """The strategy comes first and fast; the answer after it takes ~2 s, the strategy
    timeout is 0.5 s: the answer is still the model's, not cut off by the routing bound."""
    async with FakeOpenAIServer(tokens_per_s=40) as server:  # ~100 tokens: ~2.5 s
        server.queue(ServerReply.json(_ROUTED_QUICK))
        routed, took = await _route_over_http(server, strategy_timeout=0.5)
    assert routed.decision.source == "llm"
    assert routed.answer is not None and routed.answer.text.startswith("Resolvers look")
    assert took > 0.5, "the whole answer took longer than the strategy's bound"
    assert server.request_count == 1


async def test_a_model_that_writes_no_strategy_in_time_leaves_the_decision_to_the_rules() -> None:
    """A slow first token: after the strategy timeout the rules decide, the call is given up."""
    latency = 30.0  # the server's shutdown cuts the hung reply at the end
    async with FakeOpenAIServer(latency=latency) as server:
        server.queue(ServerReply.json(_ROUTED_QUICK))
        routed, took = await _route_over_http(server, strategy_timeout=0.5)
    assert routed.decision.source == "heuristic"
    assert routed.answer is None, "the quick call follows"
    # Given up, not waited out: well under the reply's 30 s (a margin a busy machine keeps).
    assert took < latency / 2, f"waited {took:.1f}s for a strategy bounded at 0.5 s"


async def test_route_and_answer_asks_for_a_bounded_number_of_tokens() -> None:
    async with FakeOpenAIServer() as server:
        server.queue(ServerReply.json(_ROUTED_QUICK))
        await _route_over_http(server, strategy_timeout=5)
        sent = server.requests[-1]
    assert sent["max_tokens"] == ROUTE_AND_ANSWER_MAX_TOKENS
