"""Deep analysis end to end: the LLM planner over the fake OpenAI server (real HTTP, real
OpenAIChatModel), read-only SQL checks against a real table, trees and jobs in PostgreSQL.

The scripted model proposes 3 hypotheses x 3 checks and judges each result from the
numbers the planner sends it; some checks are bad on purpose (a write, a syntax
error, a timeout, an empty result, a megabyte result).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from benchmarks.deep_script import DeepLLMScript, ScriptedCheck, ScriptedHypothesis
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.answers.deep_jobs import DeepJobRunner
from reasoning_core.events import Event, ReasoningEvent, ReasoningStartedEvent, answer_of
from reasoning_core.explore.policy import ExplorationPolicy
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.models import Answer
from reasoning_core.planners.llm.planner import LLMPlanner
from reasoning_core.ports import Job
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.tools.base import ToolRequest, ToolResult
from reasoning_core.tree.aggregation import logit, sigmoid, weight
from storage.jobs import PgJobStore
from storage.pool import create_pool
from storage.sql_tool import PgSqlTool
from storage.trees import PgTreeStore

CTX = PlanningContext(
    question="Why did traffic drop on cell 12345 since 8 May?", goal="Find why traffic dropped"
)
POLICY = ExplorationPolicy(stop_confidence=1.0, contradiction_threshold=0.0)
SINCE = "DATE '2024-05-08'"


def rows_of(result_text: str) -> list[dict[str, Any]]:
    """The JSON rows of a ToolResult.for_prompt() text."""
    lines = result_text.splitlines()[1:]
    return [json.loads(line) for line in lines if line.startswith("{")]


def judge_outage(text: str) -> tuple[str, float, str]:
    low = rows_of(text)[0]["min_availability"]
    return ("confirmed", 0.9, f"min availability {low}%") if low < 90 else ("refuted", 0.9, "ok")


def judge_low_days(text: str) -> tuple[str, float, str]:
    days = rows_of(text)[0]["low_days"]
    return ("confirmed", 0.8, f"{days} days below 90%") if days else ("refuted", 0.8, "none")


def judge_attempts(text: str) -> tuple[str, float, str]:
    row = rows_of(text)[0]
    ratio = row["after"] / row["before"]
    verdict = "refuted" if ratio > 0.9 else "confirmed"
    return verdict, 0.8, f"attempts {row['before']:.0f} -> {row['after']:.0f}"


def scenario() -> DeepLLMScript:
    c = "cellname = $1"
    outage = [
        ScriptedCheck("avail_min", "Lowest availability since 8 May",
                      f"SELECT min(availability) AS min_availability FROM demo.cell_days "
                      f"WHERE {c} AND day >= {SINCE}", ["12345"], judge=judge_outage),
        ScriptedCheck("low_days", "Days with availability below 90%",
                      f"SELECT count(*) AS low_days FROM demo.cell_days WHERE {c} "
                      "AND availability < 90", ["12345"], judge=judge_low_days),
        ScriptedCheck("fix_it", "Repair the statistics",  # a write: refused
                      "DELETE FROM demo.cell_days WHERE availability < 90"),
    ]  # fmt: skip
    demand = [
        ScriptedCheck("attempts", "Attempts before and after 8 May",
                      f"SELECT avg(attempts) FILTER (WHERE day < {SINCE}) AS before, "
                      f"avg(attempts) FILTER (WHERE day >= {SINCE}) AS after FROM demo.cell_days "
                      f"WHERE {c}", ["12345"], judge=judge_attempts),
        ScriptedCheck("typo", "Attempts per day",
                      "SELECT day, attempts FROM demo.cell_days WHERE"),
        ScriptedCheck("other_cell", "Attempts of the cell's twin",  # empty: judged without data
                      "SELECT attempts FROM demo.cell_days WHERE cellname = 'nope'",
                      verdict="refuted", strength=0.9, evidence="no attempts at all"),
    ]  # fmt: skip
    neighbour = [
        ScriptedCheck("slow", "Neighbour handovers",  # 10^10 joined rows: the timeout stops it
                      "SELECT count(*) AS slept FROM generate_series(1, 100000) a, "
                      "generate_series(1, 100000) b"),
        ScriptedCheck("dump", "Everything about the neighbours",  # a megabyte, truncated
                      "SELECT repeat('x', 20000) AS blob, g FROM generate_series(1, 80) g",
                      verdict="inconclusive", strength=0.2, evidence="too much to read"),
        ScriptedCheck("neighbour_traffic", "Neighbour traffic before and after",
                      f"SELECT avg(neighbour_traffic) AS traffic FROM demo.cell_days WHERE {c}",
                      ["12345"], verdict="refuted", strength=0.7, evidence="traffic 50 -> 50"),
    ]  # fmt: skip
    return DeepLLMScript(
        [
            ScriptedHypothesis("outage", "Cell outage", 0.5, outage),
            ScriptedHypothesis("demand", "Demand fell", 0.5, demand),
            ScriptedHypothesis("neighbour", "Neighbour change", 0.3, neighbour),
        ]
    )


P_OUTAGE = sigmoid(weight(0.9) + weight(0.8))
P_DEMAND = sigmoid(weight(-0.8) + weight(-0.5))  # the empty-result judgement is capped at 0.5
P_NEIGHBOUR = sigmoid(logit(0.3) + weight(-0.7))


class CountingTool:
    """Delegates to the real sql tool and records every query it runs."""

    name = "sql"

    def __init__(self, inner: PgSqlTool) -> None:
        self.inner = inner
        self.queries: list[str] = []

    async def run(self, request: ToolRequest) -> ToolResult:
        self.queries.append(request.query or "")
        return await self.inner.run(request)


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer(latency=0.02) as server:
        yield server


@pytest.fixture
async def model(llm: FakeOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    chat = OpenAIChatModel(base_url=llm.base_url, api_key="test", model="fake", timeout=5.0)
    yield chat
    await chat.aclose()


def make_analyst(
    pool: asyncpg.Pool[Any], model: OpenAIChatModel, tool: CountingTool, concurrency: int = 4
) -> DeepAnalyst:
    return DeepAnalyst(
        tree_store=PgTreeStore(pool),
        planner=LLMPlanner(model, schema_description="Tables: demo.cell_days(cellname, day, ...)"),
        tools={"sql": tool},
        policy=POLICY,
        model_concurrency=concurrency,
    )


async def test_three_hypotheses_with_sql_checks(
    pool: asyncpg.Pool[Any],
    database_url: str,
    cell_days_sql: PgSqlTool,
    llm: FakeOpenAIServer,
    model: OpenAIChatModel,
) -> None:
    script = scenario()
    llm.script(script)
    tool = CountingTool(cell_days_sql)
    events = [e async for e in make_analyst(pool, model, tool).run(CTX, user_id=7, chat_id=70)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    synthesis = answer.synthesis
    assert synthesis.primary.id == "outage" and answer.planner == "llm"
    assert synthesis.confidence == pytest.approx(P_OUTAGE)
    assert {r.id: r.confidence for r in synthesis.ranking} == pytest.approx(
        {"outage": P_OUTAGE, "demand": P_DEMAND, "neighbour": P_NEIGHBOUR}
    )
    assert "min availability 60.0%" in answer.text and "Check the cell's alarms" in answer.text
    assert llm.peak_in_flight >= 2  # independent calls overlapped at the server
    assert len(tool.queries) == 9
    # one interpretation per hypothesis, for its checks together; failed runs are not sent
    assert script.calls["interpret_all"] == 3 and script.calls["interpret"] == 0

    # every bad check became a rejected node with its reason; the report names them
    not_checked = answer.text.split("Could not check:")[1]
    for fragment in ("refused", "SQL error", "timed out"):
        assert fragment in not_checked
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("SELECT count(*) FROM demo.cell_days") == 10  # nothing deleted
    finally:
        await conn.close()

    # persisted: a new pool loads every node with its result
    other = await create_pool(database_url)
    try:
        tree = await PgTreeStore(other).load(answer.tree_id or "")
    finally:
        await other.close()
    statuses = {n.context.get("key"): n.status for n in tree.nodes.values() if n.depth == 2}
    assert statuses == {
        "avail_min": "completed", "low_days": "completed", "fix_it": "rejected",
        "attempts": "completed", "typo": "rejected", "other_cell": "completed",
        "slow": "rejected", "dump": "completed", "neighbour_traffic": "completed",
    }  # fmt: skip
    dump = next(n for n in tree.nodes.values() if n.context.get("key") == "dump")
    assert dump.result is not None
    seen = dump.result.data.pop("seen")
    assert dump.result.data == {"rows": 50, "truncated": True}
    # the first rows it saw are kept for the analysis page, as text cells
    assert seen["row_count"] == 50 and seen["truncated"] is True and len(seen["rows"]) == 20
    assert seen["columns"] == ["blob", "g"] and all(len(row) == 2 for row in seen["rows"])
    assert tree.status == "completed" and tree.user_id == 7


async def test_a_crashed_job_resumes_without_rerunning_completed_checks(
    pool: asyncpg.Pool[Any],
    cell_days_sql: PgSqlTool,
    llm: FakeOpenAIServer,
    model: OpenAIChatModel,
) -> None:
    script = scenario()
    llm.script(script)
    jobs = PgJobStore(pool)
    first_tool = CountingTool(cell_days_sql)
    runner = DeepJobRunner(jobs, make_analyst(pool, model, first_tool, 2), heartbeat_sec=0.05)
    crashed = asyncio.Event()
    seen: list[Event] = []

    async def consume() -> None:
        async for event in runner.submit(CTX, user_id=7, chat_id=70):
            seen.append(event)
            if sum(e.kind == "node_completed" for e in seen) >= 2:
                crashed.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(crashed.wait(), 10)
    task.cancel()  # the process dies mid-analysis
    await asyncio.gather(task, return_exceptions=True)

    job_id = next(
        e.job_id
        for e in seen
        if isinstance(e, ReasoningStartedEvent | ReasoningEvent) and e.job_id is not None
    )
    job = await jobs.get(job_id)
    assert job is not None and job.status == "running" and job.tree_id is not None
    tree = await PgTreeStore(pool).load(job.tree_id)
    checks = [n for n in tree.nodes.values() if n.node_type == "verification"]
    done = {n.context["query"] for n in checks if n.status in ("completed", "rejected")}
    left = sorted(n.context["query"] for n in checks if n.status == "pending")
    assert done and left
    unplanned = sum(
        1 for h in tree.nodes.values()
        if h.node_type == "hypothesis" and not any(c.parent_id == h.id for c in checks)
    )  # fmt: skip
    await pool.execute(
        "UPDATE deep_jobs SET heartbeat_at = now() - interval '1 hour' WHERE id = $1", job_id
    )

    before = script.calls.copy()
    second_tool = CountingTool(cell_days_sql)
    restarted = DeepJobRunner(jobs, make_analyst(pool, model, second_tool), heartbeat_sec=0.05)
    delivered: list[tuple[Job, Answer]] = []

    async def deliver(job: Job, answer: Answer) -> None:
        delivered.append((job, answer))

    assert await restarted.resume_stale(deliver) == 1
    assert not done & set(second_tool.queries)  # completed checks were not run again
    if not unplanned:
        assert sorted(second_tool.queries) == left
    assert script.calls["hypotheses"] == before["hypotheses"]  # the plan was kept
    assert script.calls["checks"] - before["checks"] == unplanned
    [(resumed_job, answer)] = delivered
    assert resumed_job.id == job_id and resumed_job.attempts == 2
    assert answer.synthesis is not None and answer.synthesis.primary.id == "outage"
    assert answer.confidence == pytest.approx(P_OUTAGE) and answer.tree_id == job.tree_id
    finished = await jobs.get(job_id)
    assert finished is not None and finished.status == "done" and finished.answer == answer
    assert await restarted.resume_stale(deliver) == 0  # nothing is stale any more


async def test_a_job_whose_analysis_fails_is_marked_failed(
    pool: asyncpg.Pool[Any],
    cell_days_sql: PgSqlTool,
    llm: FakeOpenAIServer,
    model: OpenAIChatModel,
) -> None:
    llm.script(lambda request: "not json at all")
    jobs = PgJobStore(pool)
    runner = DeepJobRunner(
        jobs, make_analyst(pool, model, CountingTool(cell_days_sql)), heartbeat_sec=1
    )
    events = [e async for e in runner.submit(CTX, user_id=7, chat_id=70)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.error == "deep_failed"
    started = events[0]
    assert isinstance(started, ReasoningStartedEvent) and started.job_id is not None
    job = await jobs.get(started.job_id)
    assert job is not None and job.status == "failed" and job.error


async def test_a_job_interrupted_too_often_is_given_up(
    pool: asyncpg.Pool[Any],
    cell_days_sql: PgSqlTool,
    llm: FakeOpenAIServer,
    model: OpenAIChatModel,
) -> None:
    llm.script(scenario())
    jobs = PgJobStore(pool)
    job = await jobs.enqueue(CTX, user_id=7, chat_id=70)
    await jobs.claim(job.id)
    await pool.execute(
        "UPDATE deep_jobs SET attempts = 3, heartbeat_at = now() - interval '1 hour' "
        "WHERE id = $1",
        job.id,
    )
    tool = CountingTool(cell_days_sql)
    runner = DeepJobRunner(jobs, make_analyst(pool, model, tool), heartbeat_sec=1, max_attempts=3)
    delivered: list[Answer] = []

    async def deliver(job: Job, answer: Answer) -> None:
        delivered.append(answer)

    assert await runner.resume_stale(deliver) == 1
    assert tool.queries == [] and llm.request_count == 0
    [answer] = delivered
    assert answer.error == "deep_failed" and "interrupted 3 times" in answer.text
    failed = await jobs.get(job.id)
    assert failed is not None and failed.status == "failed"
