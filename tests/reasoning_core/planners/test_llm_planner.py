"""LLMPlanner through the real OpenAIChatModel against the fake OpenAI server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.errors import LLMResponseError
from reasoning_core.llm import prompts
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.models import RankedHypothesis, Synthesis, Tree
from reasoning_core.planners.llm.planner import LLMPlanner
from reasoning_core.ports.planning import CheckProposal, HypothesisProposal, PlanningContext
from reasoning_core.tools.base import ToolRequest, ToolResult
from reasoning_core.tools.sql_check import refusal_reason

CTX = PlanningContext(
    question="Why did traffic drop on cell 12345 since Monday?",
    goal="Find why traffic dropped on cell 12345",
    parameters={"cell": "12345"},
    excluded_hypotheses=["weather"],
)
SCHEMA = "Tables you may query:\n- demo.hour_stats(cellname text, dt timestamptz, ps_att int)"
OUTAGE = HypothesisProposal(
    key="outage", title="Cell outage", confirm_if="availability < 90%", refute_if="100%"
)
CHECK = CheckProposal(
    key="availability",
    description="Availability since Monday",
    tool="sql",
    request=ToolRequest(query="SELECT min(cell_availability) FROM demo.hour_stats"),
)


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def planner(llm: FakeOpenAIServer) -> AsyncIterator[LLMPlanner]:
    model = OpenAIChatModel(
        base_url=llm.base_url, api_key="test", model="fake-model", timeout=5.0, backoff=0.01
    )
    yield LLMPlanner(model, schema_description=SCHEMA)
    await model.aclose()


def _messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return list(request["messages"])


async def test_hypotheses_are_validated_one_by_one(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    items = [
        {"key": "outage", "title": "Cell outage", "prior": 0.6, "confirm_if": "availability"},
        {"key": "nameless", "prior": 0.4},  # no title: dropped
        {"title": "Radio interference!", "prior": 7},  # key derived, prior clipped
        "a sentence instead of an object",
    ]
    llm.queue(Reply.json({"hypotheses": items}))
    plan = await planner.propose_hypotheses(CTX)
    assert [(h.key, h.title, h.prior) for h in plan.hypotheses] == [
        ("outage", "Cell outage", 0.6),
        ("radio_interference", "Radio interference!", 0.99),
    ]
    system, user = _messages(llm.requests[0])
    assert system["content"] == prompts.DEEP_HYPOTHESES_SYSTEM
    assert (
        "<question>\nWhy did traffic drop on cell 12345 since Monday?\n</question>"
        in (user["content"])
    )
    assert SCHEMA in user["content"] and "Excluded keys: weather" in user["content"]
    assert llm.requests[0]["response_format"]["type"] == "json_schema"  # with the schema


async def test_no_usable_hypothesis_is_an_llm_response_error(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    llm.queue(Reply.json({"hypotheses": [{"key": "x"}]}))
    with pytest.raises(LLMResponseError, match="no usable hypothesis"):
        await planner.propose_hypotheses(CTX)


async def test_malformed_json_gets_one_repair_then_fails(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    good = {"hypotheses": [{"key": "outage", "title": "Cell outage"}]}
    llm.queue(Reply.malformed(), Reply.json(good))
    plan = await planner.propose_hypotheses(CTX)
    assert [h.key for h in plan.hypotheses] == ["outage"]
    assert llm.request_count == 2
    llm.queue(Reply.malformed(), Reply.malformed('{"hypotheses": '))
    with pytest.raises(LLMResponseError, match="after one repair"):
        await planner.propose_hypotheses(CTX)


async def test_a_conclusion_means_nothing_to_investigate(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    reply = {"hypotheses": [], "conclusion": {"finding": "No drop found", "confidence": 0.8}}
    llm.queue(Reply.json(reply))
    plan = await planner.propose_hypotheses(CTX)
    assert plan.hypotheses == [] and plan.conclusion is not None
    assert plan.conclusion.text == "No drop found" and plan.conclusion.confidence == 0.8
    assert not plan.conclusion.has_data  # a judgement: aggregation caps it at 0.5


async def test_checks_are_the_models_tool_calls(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    llm.queue(
        Reply.tool_calls_of(
            ("sql", {"key": "availability", "description": "Availability since Monday",
                     "query": "SELECT min(cell_availability) FROM demo.hour_stats WHERE "
                              "cellname = $1", "params": ["12345"], "gain": 0.9}),
            ("shell", {"key": "rm", "description": "remove logs", "query": "rm -rf /"}),
            ("sql", "{not json"),
            ("sql", {"key": "bad", "query": "SELECT 1", "timeout_sec": -5}),
        )
    )  # fmt: skip
    checks = await planner.propose_checks(CTX, OUTAGE)
    assert [(c.key, c.tool) for c in checks] == [("availability", "sql"), ("rm", "shell")]
    assert checks[0].request.params == ["12345"] and checks[0].gain == 0.9
    request = llm.requests[0]
    assert [t["function"]["name"] for t in request["tools"]] == ["sql"]
    user = _messages(request)[1]["content"]
    assert "Hypothesis: Cell outage" in user and "Confirmed if: availability < 90%" in user
    assert SCHEMA in user


async def test_checks_written_as_text_or_after_a_nudge(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    as_text = {"checks": [{"tool": "sql", "key": "att", "description": "Attempts",
                           "query": "SELECT 1"}]}  # fmt: skip
    llm.queue(Reply.json(as_text))
    assert [c.key for c in await planner.propose_checks(CTX, OUTAGE)] == ["att"]
    llm.queue(Reply.text("I would look at availability."), Reply.tool_call("sql", {
        "key": "availability", "description": "Availability", "query": "SELECT 1"}))  # fmt: skip
    assert [c.key for c in await planner.propose_checks(CTX, OUTAGE)] == ["availability"]
    assert _messages(llm.requests[-1])[-1]["content"] == prompts.DEEP_CHECKS_NUDGE
    llm.queue(Reply.text("no"), Reply.text("still no"))
    with pytest.raises(LLMResponseError, match="no usable check"):
        await planner.propose_checks(CTX, OUTAGE)


async def test_refused_sql_is_sent_back_with_the_reason_for_one_rewrite(
    llm: FakeOpenAIServer,
) -> None:
    model = OpenAIChatModel(
        base_url=llm.base_url, api_key="test", model="fake-model", timeout=5.0, backoff=0.01
    )
    planner = LLMPlanner(
        model,
        schema_description=SCHEMA,
        query_gates={"sql": lambda sql: refusal_reason(sql, schemas=("demo",))},
    )
    good = "SELECT min(cell_availability) FROM demo.hour_stats"
    llm.queue(
        Reply.tool_calls_of(
            ("sql", {"key": "availability", "query": good}),
            ("sql", {"key": "leak", "query": "SELECT content FROM public.memories"}),
        ),
        Reply.tool_call("sql", {"key": "attempts",
                                "query": "SELECT sum(ps_att) FROM demo.hour_stats"}),
    )  # fmt: skip
    try:
        checks = await planner.propose_checks(CTX, OUTAGE)
    finally:
        await model.aclose()
    assert [c.key for c in checks] == ["availability", "attempts"]
    rewrite = _messages(llm.requests[1])[-1]["content"]
    assert "- leak: table public.memories is outside the data schemas" in rewrite
    assert "availability" not in rewrite  # only the refused query goes back


async def test_interpretation_with_numbers_and_without_data(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    rows = ToolResult(tool="sql", ok=True, rows=[{"min": 61.2}], row_count=1)
    llm.queue(Reply.json({"verdict": "Confirmed", "strength": 0.9, "evidence": "min 61.2%"}))
    evidence = await planner.interpret(CTX, OUTAGE, CHECK, rows)
    assert (evidence.confirmed, evidence.confidence, evidence.text) == (True, 0.9, "min 61.2%")
    assert evidence.has_data
    empty = ToolResult(tool="sql", ok=True, rows=[], row_count=0)
    llm.queue(Reply.json({"verdict": "refuted", "strength": 0.95, "evidence": "no rows"}))
    judged = await planner.interpret(CTX, OUTAGE, CHECK, empty)
    assert judged.confirmed is False and not judged.has_data  # capped at 0.5 by aggregation
    failed = ToolResult.failure("sql", "timeout", "query timed out")
    unasked = llm.request_count
    assert (await planner.interpret(CTX, OUTAGE, CHECK, failed)).confirmed is None
    assert llm.request_count == unasked


LOW_DAYS = CheckProposal(
    key="low_days",
    description="Days below 90%",
    tool="sql",
    request=ToolRequest(query="SELECT count(*) FROM demo.hour_stats WHERE avail < 90"),
)


async def test_one_call_interprets_all_checks_of_a_hypothesis(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    rows = ToolResult(tool="sql", ok=True, rows=[{"min": 61.2}], row_count=1)
    days = ToolResult(tool="sql", ok=True, rows=[{"count": 0}], row_count=1)
    failed = ToolResult.failure("sql", "timeout", "query timed out")
    verdicts = [  # in another order than asked, with one item that is not a verdict
        {"check": "low_days", "verdict": "refuted", "strength": 0.6, "evidence": "0 days"},
        {"check": "availability", "verdict": "CONFIRMED", "strength": 1.7, "evidence": "61.2%"},
        {"check": "availability", "verdict": "refuted"},  # a second verdict: the first counts
        "nonsense",
    ]
    llm.queue(Reply.json({"verdicts": verdicts}))
    timeout = CHECK.model_copy(update={"key": "slow"})
    evidence = await planner.interpret_checks(
        CTX, OUTAGE, [(CHECK, rows), (timeout, failed), (LOW_DAYS, days)]
    )
    assert llm.request_count == 1
    got = [(e.confirmed, e.confidence, e.text) if e else None for e in evidence]
    assert got == [(True, 1.0, "61.2%"), (None, 0.0, failed.for_prompt()), (False, 0.6, "0 days")]
    sent = _messages(llm.requests[-1])
    assert sent[0]["content"] == prompts.DEEP_INTERPRET_ALL_SYSTEM
    user = sent[1]["content"]
    assert "Check availability: Availability since Monday" in user
    assert '<result key="low_days">' in user and '{"min": 61.2}' in user
    assert "slow" not in user  # a failed run is not sent to the model


async def test_a_verdict_left_out_is_none_and_an_unusable_reply_an_error(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    rows = ToolResult(tool="sql", ok=True, rows=[{"min": 61.2}], row_count=1)
    one = {"check": "availability", "verdict": "confirmed", "strength": 0.9, "evidence": "61%"}
    llm.queue(Reply.json({"verdicts": [one, {"check": "low_days", "verdict": "maybe"}]}))
    evidence = await planner.interpret_checks(CTX, OUTAGE, [(CHECK, rows), (LOW_DAYS, rows)])
    assert evidence[0] is not None and evidence[0].confirmed is True
    assert evidence[1] is None  # the explorer asks about it alone
    # nothing usable after one repair: an error (the explorer then asks check by check)
    llm.queue(Reply.malformed(), Reply.json({"verdicts": []}))
    with pytest.raises(LLMResponseError):
        await planner.interpret_checks(CTX, OUTAGE, [(CHECK, rows)])
    bad = {"check": "other", "verdict": "confirmed"}
    llm.queue(Reply.json({"verdicts": [bad]}))
    with pytest.raises(LLMResponseError, match="no usable verdict"):
        await planner.interpret_checks(CTX, OUTAGE, [(CHECK, rows)])


async def test_megabyte_results_are_truncated_in_the_prompt(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    huge = [{"line": "x" * 1000, "n": i} for i in range(1000)]
    result = ToolResult(tool="sql", ok=True, rows=huge, row_count=1000, truncated=True,
                        truncation_note="result cut to the first 1000 rows")  # fmt: skip
    llm.queue(Reply.json({"verdict": "inconclusive", "strength": 0.2, "evidence": "too much"}))
    await planner.interpret(CTX, OUTAGE, CHECK, result)
    sent = _messages(llm.requests[-1])[1]["content"]
    assert len(json.dumps(huge)) > 1_000_000 and len(sent) < 6000
    assert "only 3 of 1000 rows shown to fit the prompt" in sent


async def test_synthesis_words_and_may_choose_the_primary(
    planner: LLMPlanner, llm: FakeOpenAIServer
) -> None:
    ranking = [
        RankedHypothesis(id="outage", node_id="h1", title="Cell outage", confidence=0.62),
        RankedHypothesis(id="demand", node_id="h2", title="Demand fell", confidence=0.58),
    ]
    synthesis = Synthesis(
        primary=ranking[0], confidence=0.4, margin=0.04, ranking=ranking,
        evidence=["Cell outage / Availability: confirmed (0.60): min 81%"],
        uncertainty_reason="the runner-up is close",
    )  # fmt: skip
    llm.queue(Reply.json({"primary": "demand", "recommendations": ["Check alarms", ""],
                          "uncertainty_reason": "Die Daten sind knapp"}))  # fmt: skip
    worded = await planner.synthesize(CTX, Tree(id="t", task="why"), synthesis)
    assert worded.primary.id == "demand" and worded.confidence == 0.4
    assert worded.recommendations == ["Check alarms"]
    assert worded.uncertainty_reason == "Die Daten sind knapp"
    user = _messages(llm.requests[-1])[1]["content"]
    assert "- outage: Cell outage, 0.62" in user and "min 81%" in user
    assert planner.usage.llm_calls == 1
