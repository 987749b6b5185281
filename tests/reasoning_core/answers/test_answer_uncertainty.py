"""Every Answer path (quick, decline, deep, clarify and clarify-resumed) carries a
confidence and, below 0.7, an uncertainty_reason built from the real causes: the whole
runtime (bot.wiring.app.open_runtime) over real PostgreSQL and the fake OpenAI server."""

from __future__ import annotations

from typing import Any

from benchmarks.deep_script import DeepLLMScript, ScriptedCheck, ScriptedHypothesis
from benchmarks.harness.llm_routes import decision, routed
from bot.config import load_settings
from bot.wiring.app import open_runtime
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.models import UNCERTAINTY_THRESHOLD, Answer, Question

USER = 811


def strategy(request: dict[str, Any]) -> dict[str, Any]:
    message = str(request["messages"][-1]["content"]).split("<message>")[-1]
    if "wipe" in message:
        return decision("decline", confidence=0.55, reason="I only read data.")
    if "5xx" in message:
        return decision("deep", confidence=0.6)
    if "broken" in message and "checkout" in message:
        return decision("quick", confidence=0.6)
    if "broken" in message:
        question = {"text": "Which service?", "options": ["checkout", "payments"]}
        return decision("clarify", confidence=0.5, questions=[question])
    return decision("quick", confidence=0.9)


def planner() -> DeepLLMScript:
    check = ScriptedCheck(
        "deploys",
        "Deploys in the last hour",
        "SELECT 0 AS deploys",
        verdict="refuted",
        strength=0.8,
        evidence="0 deploys",
    )
    return DeepLLMScript([ScriptedHypothesis("deploy", "A bad deploy", 0.4, [check])])


def assert_explained(answer: Answer) -> None:
    assert 0.0 <= answer.confidence <= 1.0
    if answer.confidence < UNCERTAINTY_THRESHOLD:
        assert answer.uncertainty_reason, answer


async def test_every_answer_path_says_why_it_is_unsure(database_url: str) -> None:
    async with FakeOpenAIServer() as llm:
        quick = {"answer": "Probably a cache issue.", "confidence": 0.4}
        llm.script(routed(strategy=strategy, answer=quick, deep=planner()))
        settings = load_settings(
            env_file=None,
            database_url=database_url,
            openai_api_key="test-key",
            openai_base_url=llm.base_url,
            llm_model="fake",
            llm_timeout_sec=5,
            llm_max_retries=0,
            strategy_cache_size=0,
        )
        async with open_runtime(settings) as runtime:
            service = runtime.service

            async def ask(text: str, chat: int) -> Answer:
                return await service.answer(Question(text=text, user_id=USER, chat_id=chat))

            answers = {
                "quick": await ask("what is a cache?", 1),
                "decline": await ask("please wipe the prod database", 2),
                "deep": await ask("why is checkout failing with 5xx?", 3),
                "clarify": await ask("it's broken again", 4),
                "resumed": await ask("checkout", 4),
            }
    for answer in answers.values():
        assert_explained(answer)
    assert answers["quick"].uncertainty_reason is not None
    assert "model's judgement" in answers["quick"].uncertainty_reason
    assert answers["decline"].uncertainty_reason is not None
    assert "choice of how to answer" in answers["decline"].uncertainty_reason
    deep = answers["deep"]
    assert deep.strategy == "deep" and deep.tree_id and deep.confidence < 0.5
    assert deep.uncertainty_reason and "not established" in deep.uncertainty_reason
    assert answers["clarify"].strategy == "clarify"
    # the model's quick answer to "it's broken again" + "checkout" (a named service with a
    # symptom) is not followed: the rules investigate, and say why they chose
    resumed = answers["resumed"]
    assert resumed.strategy == "deep" and resumed.tree_id, resumed
