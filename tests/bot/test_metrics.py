"""Prometheus /metrics and /healthz over real HTTP, after real questions through Telegram."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from benchmarks.harness.polling_bot import running_bot
from bot.operations.metrics import Metrics
from bot.operations.server import serve_ops
from bot.wiring.instrumented import InstrumentedChatModel
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from reasoning_core.errors import LLMHTTPError, LLMTimeoutError
from reasoning_core.events import (
    Event,
    PlanRevisedEvent,
    ReasoningEvent,
    ReflectionEvent,
    StrategySelectedEvent,
)
from reasoning_core.models import Answer, StrategyDecision, Usage
from reasoning_core.ports import ChatMessage, Completion, ToolSpec
from tests.bot.ops_helpers import USER, ops_settings, say

SERIES = [
    "strategy_selected_total",
    "strategy_confidence_bucket",
    "answer_seconds_bucket",
    "llm_requests_total",
    "llm_tokens_total",
    "memory_context_injected_total",
    "memory_hits_total",
    "reflection_triggered_total",
    "plan_revised_total",
    "confidence_below_threshold_total",
    "deep_jobs",
    "telegram_errors_total",
]

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


async def test_metrics_expose_the_named_series_with_real_values(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    settings = ops_settings(database_url, telegram, llm.base_url)
    async with (
        running_bot(settings, telegram) as bot,
        serve_ops(bot.runtime.ops, host="127.0.0.1", port=0) as server,
    ):
        telegram.fail_next("sendMessage", 429, retry_after=1)
        # The third question shares "DNS" with the first: long-term memory is recalled.
        for question in ("what is DNS?", "what is TCP?", "how does DNS caching work?"):
            assert "fake model" in await say(telegram, USER, question, timeout=8)
        status, text = await get(f"{server.base_url}/metrics")
    assert status == 200
    for name in SERIES:
        assert f"\n{name}" in text, f"{name} is missing"
    samples = parse(text)
    assert value(samples, "strategy_selected_total", strategy="quick") == 3
    assert value(samples, "strategy_confidence_count") == 3
    assert value(samples, "answer_seconds_count", strategy="quick") == 3
    assert value(samples, "answer_seconds_sum", strategy="quick") > 0
    assert value(samples, "answer_seconds_count", strategy="deep") == 0
    assert value(samples, "llm_requests_total", outcome="ok") == 3
    assert value(samples, "llm_tokens_total", kind="prompt") > 0
    assert value(samples, "llm_tokens_total", kind="completion") > 0
    assert value(samples, "confidence_below_threshold_total") == 0  # the fake says 0.9
    assert value(samples, "telegram_errors_total", kind="retry_after") == 1
    assert value(samples, "deep_jobs", state="queued") == 0
    assert value(samples, "database_up") == 1
    assert value(samples, "memory_context_injected_total") >= 1
    assert value(samples, "memory_hits_total") >= 1


async def test_healthz_follows_the_database_and_metrics_survive_an_outage(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    settings = ops_settings(database_url, telegram, llm.base_url)
    async with (
        running_bot(settings, telegram) as bot,
        serve_ops(bot.runtime.ops, host="127.0.0.1", port=0) as server,
    ):
        status, body = await get(f"{server.base_url}/healthz")
        assert (status, '"database": "up"' in body) == (200, True)
        await bot.runtime.pool.close()  # the database is gone for this process
        status, body = await get(f"{server.base_url}/healthz")
        assert status == 503 and '"database": "down"' in body
        status, text = await get(f"{server.base_url}/metrics")
        assert status == 200
        assert value(parse(text), "database_up") == 0
        assert "strategy_selected_total" in text


# --- the metric updates themselves ---------------------------------------------------


def test_events_update_their_counters() -> None:
    metrics = Metrics()
    decision = StrategyDecision(strategy="deep", confidence=0.65, reason="unclear")
    events: list[Event] = [
        StrategySelectedEvent(decision=decision),
        ReasoningEvent(memory_hits=3),
        ReasoningEvent(memory_hits=0),
        ReflectionEvent(action="revise"),
        ReflectionEvent(action="revise"),
        PlanRevisedEvent(revision=1, previous_failure="no winner"),
    ]
    for event in events:
        metrics.observe_event(event)
    metrics.observe_answer(Answer(strategy="deep", text="x", confidence=0.4), 12.5)
    metrics.observe_answer(Answer(strategy="clarify", text="which?", confidence=0.0), 0.5)
    samples = parse(metrics.exposition().decode())
    assert value(samples, "strategy_selected_total", strategy="deep") == 1
    assert value(samples, "strategy_confidence_bucket", le="0.7") == 1
    assert value(samples, "strategy_confidence_bucket", le="0.6") == 0
    assert value(samples, "memory_context_injected_total") == 1
    assert value(samples, "memory_hits_total") == 3
    assert value(samples, "reflection_triggered_total") == 2
    assert value(samples, "plan_revised_total") == 1
    assert value(samples, "answer_seconds_sum", strategy="deep") == 12.5
    assert value(samples, "confidence_below_threshold_total") == 1, "clarify prompts don't count"


def test_deep_job_gauge_resets_states_that_disappear() -> None:
    metrics = Metrics()
    metrics.set_deep_jobs({"running": 2, "done": 5})
    metrics.set_deep_jobs({"done": 6})
    samples = parse(metrics.exposition().decode())
    assert value(samples, "deep_jobs", state="running") == 0
    assert value(samples, "deep_jobs", state="done") == 6


class _Failing:
    def __init__(self, errors: list[Exception]) -> None:
        self.errors = errors

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> Completion:
        if self.errors:
            raise self.errors.pop(0)
        return Completion(text="ok", usage=Usage(prompt_tokens=7, completion_tokens=3))


async def test_llm_outcomes_and_tokens_are_counted() -> None:
    metrics = Metrics()
    inner = _Failing([LLMTimeoutError("slow"), LLMHTTPError("bad", status=500)])
    model = InstrumentedChatModel(inner, metrics=metrics)
    prompt = [ChatMessage(role="user", content="hi")]
    for error in (LLMTimeoutError, LLMHTTPError):
        with pytest.raises(error):
            await model.complete(prompt)
    assert (await model.complete(prompt)).text == "ok"
    samples = parse(metrics.exposition().decode())
    assert value(samples, "llm_requests_total", outcome="timeout") == 1
    assert value(samples, "llm_requests_total", outcome="http_error") == 1
    assert value(samples, "llm_requests_total", outcome="ok") == 1
    assert value(samples, "llm_tokens_total", kind="prompt") == 7
    assert value(samples, "llm_tokens_total", kind="completion") == 3
