"""Prometheus metrics: one registry per runtime, updated from reasoning events,
LLM calls and Telegram API errors (counted by bot/telegram/metrics.py), served by
bot/operations/server.py on METRICS_PORT.

Series (names as operators query them):

- ``strategy_selected_total{strategy}``, ``strategy_confidence`` (histogram);
- ``answer_seconds{strategy}`` (histogram), ``confidence_below_threshold_total``;
- ``llm_requests_total{outcome}``, ``llm_tokens_total{kind}``;
- ``memory_context_injected_total``, ``memory_hits_total``: from the ``reasoning``
  events that carry ``memory_hits`` (> 0 means memory was injected);
- ``reflection_triggered_total``, ``plan_revised_total``: events of those kinds;
- ``deep_jobs{state}`` (gauge): refreshed from the database on every scrape;
- ``telegram_errors_total{kind}``; ``database_up`` (gauge, 1 or 0 at the last scrape).

Every labelled series starts at zero for its known label values, so a scrape
right after start shows the whole set.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from reasoning_core import (
    STRATEGIES,
    UNCERTAINTY_THRESHOLD,
    Answer,
    Event,
    PlanRevisedEvent,
    ReasoningEvent,
    ReflectionEvent,
    StrategySelectedEvent,
    Usage,
)

LLM_OUTCOMES = ("ok", "timeout", "http_error", "bad_response", "error")
TOKEN_KINDS = ("prompt", "completion")
DEEP_JOB_STATES = ("queued", "running", "done", "failed")
#: How a failed Bot API call is counted (bot/telegram/metrics.py tells them apart).
TELEGRAM_ERROR_KINDS = (
    "retry_after",
    "bad_request",
    "forbidden",
    "unauthorized",
    "not_found",
    "conflict",
    "server_error",
    "network",
    "other",
)

_CONFIDENCE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_SECONDS_BUCKETS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)


class Metrics:
    """The metric objects of one running bot, in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.strategy_selected = Counter(
            "strategy_selected", "Strategy decisions", ["strategy"], registry=r
        )
        self.strategy_confidence = Histogram(
            "strategy_confidence",
            "Confidence of strategy decisions",
            buckets=_CONFIDENCE_BUCKETS,
            registry=r,
        )
        self.answer_seconds = Histogram(
            "answer_seconds",
            "Time from question to answer",
            ["strategy"],
            buckets=_SECONDS_BUCKETS,
            registry=r,
        )
        self.confidence_below_threshold = Counter(
            "confidence_below_threshold",
            f"Answers with confidence below {UNCERTAINTY_THRESHOLD}",
            registry=r,
        )
        self.llm_requests = Counter("llm_requests", "LLM calls", ["outcome"], registry=r)
        self.llm_tokens = Counter("llm_tokens", "LLM tokens", ["kind"], registry=r)
        self.memory_context_injected = Counter(
            "memory_context_injected", "Prompts that carried long-term memory", registry=r
        )
        self.memory_hits = Counter("memory_hits", "Memory entries injected", registry=r)
        self.reflection_triggered = Counter(
            "reflection_triggered", "Reflection checkpoints", registry=r
        )
        self.plan_revised = Counter("plan_revised", "Plan revisions", registry=r)
        self.deep_jobs = Gauge("deep_jobs", "Deep-analysis jobs by state", ["state"], registry=r)
        self.telegram_errors = Counter(
            "telegram_errors", "Telegram Bot API errors", ["kind"], registry=r
        )
        self.database_up = Gauge("database_up", "1 if the database answered", registry=r)
        self._zero_labels()

    def _zero_labels(self) -> None:
        for strategy in STRATEGIES:
            self.strategy_selected.labels(strategy)
            self.answer_seconds.labels(strategy)
        for outcome in LLM_OUTCOMES:
            self.llm_requests.labels(outcome)
        for kind in TOKEN_KINDS:
            self.llm_tokens.labels(kind)
        for state in DEEP_JOB_STATES:
            self.deep_jobs.labels(state)
        for kind in TELEGRAM_ERROR_KINDS:
            self.telegram_errors.labels(kind)

    def observe_event(self, event: Event) -> None:
        """Count what one reasoning event tells (answers go to `observe_answer`)."""
        if isinstance(event, StrategySelectedEvent):
            self.strategy_selected.labels(event.decision.strategy).inc()
            self.strategy_confidence.observe(event.decision.confidence)
        elif isinstance(event, ReflectionEvent):
            self.reflection_triggered.inc()
        elif isinstance(event, PlanRevisedEvent):
            self.plan_revised.inc()
        hits = event.memory_hits if isinstance(event, ReasoningEvent) else None
        if hits is not None and hits > 0:
            self.memory_context_injected.inc()
            self.memory_hits.inc(hits)

    def observe_answer(self, answer: Answer, seconds: float) -> None:
        """Time to answer per strategy; low confidence counts unless it is a clarifying prompt."""
        self.answer_seconds.labels(answer.strategy).observe(max(seconds, 0.0))
        if answer.strategy != "clarify" and answer.confidence < UNCERTAINTY_THRESHOLD:
            self.confidence_below_threshold.inc()

    def observe_llm(self, outcome: str, usage: Usage | None = None) -> None:
        self.llm_requests.labels(outcome).inc()
        if usage is not None:
            self.llm_tokens.labels("prompt").inc(usage.prompt_tokens)
            self.llm_tokens.labels("completion").inc(usage.completion_tokens)

    def set_deep_jobs(self, counts: dict[str, int]) -> None:
        """Known states not in `counts` drop to zero; unknown states get their own series."""
        for state in {*DEEP_JOB_STATES, *counts}:
            self.deep_jobs.labels(state).set(counts.get(state, 0))

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)
