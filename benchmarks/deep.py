"""`whytree bench deep`: does the wall time of a deep analysis follow the tree's critical path?

The fake OpenAI server answers every request after a fixed latency L and is
scripted (`DeepLLMScript`) to grow H = 4 hypotheses x C = 3 checks through the
real LLM planner and OpenAI adapter (4 is what real analyses have: the
service_error_spike runbook, the "2-4 causes" the LLM planner is asked for,
and the explorer's `max_branches`); trees are saved to PostgreSQL (the `dsn`
argument, migrated here). The checks run on a stand-in tool that answers
instantly with one row, and the bench's sessions do not wait for commits to
reach the disk (``synchronous_commit=off``, unless `durable_commits`), so the
figures measure the explorer's scheduling of model calls, not a data source or
the disk. Every change is still written to PostgreSQL, in order. Before the
clock starts, one request warms up the SDK and the start-up heap is frozen for
the garbage collector (`gc.freeze`), so one-off costs and random full
collections do not blur the figures.

The arithmetic. The critical path is the longest chain of model calls that
must follow each other: propose hypotheses -> propose checks -> interpret a
hypothesis's results -> synthesis, i.e. 4 rounds, so ``critical_path_s = 4 x
L``. The analysis makes 2H + 2 model calls (1 + H check proposals + H
interpretations, one per hypothesis for all of its checks + 1), which is what
concurrency 1 measures (``serial_wall_s``): ``speedup`` against it is at most
(2H + 2) / 4 = 2.5 here (``speedup_bound``), reached once MODEL_CONCURRENCY >= H
(the default 4 is enough: tool runs have their own limit and never hold a
model slot). The old design interpreted every check on its own: 1 + H + H x C
+ 1 = 18 calls one after another, ``per_check_serial_s = 18 x L`` (the nominal
figure, without any overhead, so the speedup against it is not overstated);
``speedup_vs_per_check_serial`` is that over the wall time, at most 18 / 4 =
4.5.
"""

from __future__ import annotations

import gc
import json
import time
from typing import Any

import asyncpg

from benchmarks.deep_script import DeepLLMScript, ScriptedCheck, ScriptedHypothesis
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import AnswerEvent
from reasoning_core.explore.budgets import Budgets
from reasoning_core.explore.policy import ExplorationPolicy
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.planners.llm.planner import LLMPlanner
from reasoning_core.ports import ChatMessage
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.tools.base import ToolRequest, ToolResult
from storage.migrate import apply_migrations
from storage.trees import PgTreeStore

#: propose hypotheses -> propose checks -> interpret -> synthesis.
CRITICAL_ROUNDS = 4
#: The bench's tree: hypotheses and checks per hypothesis.
HYPOTHESES = 4
CHECKS = 3
#: Model calls of the analysis: hypotheses, checks per hypothesis, one interpretation
#: per hypothesis, synthesis; and of the old design, which interpreted check by check.
MODEL_CALLS = 1 + HYPOTHESES + HYPOTHESES + 1
PER_CHECK_CALLS = 1 + HYPOTHESES + HYPOTHESES * CHECKS + 1
#: Grow the whole tree: no early stop, no pruning of refuted or unpromising work.
BENCH_POLICY = ExplorationPolicy(
    stop_confidence=1.0, contradiction_threshold=0.0, pruning_threshold=0.0
)


class InstantTool:
    """A stand-in data source: one row at once, so only LLM latency is measured."""

    name = "sql"

    def __init__(self) -> None:
        self.runs = 0

    async def run(self, request: ToolRequest) -> ToolResult:
        self.runs += 1
        return ToolResult(tool=self.name, ok=True, rows=[{"value": 42}], row_count=1)


def bench_script() -> DeepLLMScript:
    """HYPOTHESES x CHECKS: the first hypothesis confirmed, the others refuted."""
    names = (
        ("outage", "Cell outage"),
        ("demand", "Demand fell"),
        ("neighbour", "Neighbour change"),
        ("reporting", "Reporting gap"),
    )
    hypotheses = []
    for h, (key, title) in enumerate(names[:HYPOTHESES]):
        checks = [
            ScriptedCheck(
                key=f"{key}_{c}",
                description=f"{title} check {c}",
                query=f"SELECT {h * CHECKS + c} AS value",
                verdict="confirmed" if h == 0 else "refuted",
                strength=0.8,
                evidence=f"value 42 in check {c}",
            )
            for c in range(1, CHECKS + 1)
        ]
        hypotheses.append(ScriptedHypothesis(key=key, title=title, prior=0.3, checks=checks))
    return DeepLLMScript(hypotheses)


async def _bench_pool(dsn: str, *, size: int, durable_commits: bool) -> asyncpg.Pool[Any]:
    """A pool like storage.pool's (JSONB codec); commits not flushed unless `durable_commits`."""

    async def init(conn: asyncpg.Connection[Any]) -> None:
        await conn.set_type_codec(
            "jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog"
        )

    settings = {} if durable_commits else {"synchronous_commit": "off"}
    pool: asyncpg.Pool[Any] = await asyncpg.create_pool(
        dsn, min_size=2, max_size=size, init=init, server_settings=settings
    )
    return pool


async def timed_run(
    dsn: str,
    *,
    latency_s: float,
    concurrency: int,
    tool_concurrency: int | None = None,
    durable_commits: bool = False,
) -> tuple[float, int]:
    """Seconds one deep analysis takes at `concurrency` model calls (and as many tool
    runs, unless `tool_concurrency`), and the model requests it made."""
    async with FakeOpenAIServer(latency=latency_s) as llm:
        llm.script(bench_script())
        model = OpenAIChatModel(
            base_url=llm.base_url, api_key="bench", model="fake-model", timeout=30.0
        )
        pool = await _bench_pool(dsn, size=concurrency + 2, durable_commits=durable_commits)
        try:
            # The SDK's first request builds its types and connection: not part of the run.
            await model.complete([ChatMessage(role="user", content="warm up")])
            analyst = DeepAnalyst(
                tree_store=PgTreeStore(pool),
                planner=LLMPlanner(model, schema_description="Tables: bench(value int)"),
                tools={"sql": InstantTool()},
                budgets=Budgets(),
                policy=BENCH_POLICY,
                model_concurrency=concurrency,
                tool_concurrency=tool_concurrency or concurrency,
            )
            ctx = PlanningContext(question="Why did traffic drop?", goal="Find the cause")
            started = time.perf_counter()
            async for event in analyst.run(ctx, user_id=1, chat_id=1):
                if isinstance(event, AnswerEvent) and event.answer.error:
                    raise RuntimeError(f"the bench analysis failed: {event.answer.text}")
            elapsed = time.perf_counter() - started
        finally:
            await pool.close()
            await model.aclose()
    return elapsed, llm.request_count - 1


async def run_deep_bench(
    *,
    dsn: str,
    latency_ms: float = 100,
    concurrency: int = 4,
    tool_concurrency: int | None = None,
    durable_commits: bool = False,
) -> dict[str, Any]:
    """Wall time at `concurrency` model calls and at 1, against the tree's critical path."""
    conn = await asyncpg.connect(dsn)
    try:
        await apply_migrations(conn)
    finally:
        await conn.close()
    latency = latency_ms / 1000
    # Full collections over the start-up heap (SDK, pydantic, asyncpg) pause the loop for
    # tens of ms at random; freeze it so both runs see the same, smaller pauses.
    gc.collect()
    gc.freeze()
    try:
        wall, calls = await timed_run(
            dsn,
            latency_s=latency,
            concurrency=concurrency,
            tool_concurrency=tool_concurrency,
            durable_commits=durable_commits,
        )
        serial, serial_calls = await timed_run(
            dsn, latency_s=latency, concurrency=1, durable_commits=durable_commits
        )
    finally:
        gc.unfreeze()
    if calls != MODEL_CALLS or serial_calls != MODEL_CALLS:
        raise RuntimeError(
            f"the bench analysis made {calls} and {serial_calls} model calls, "
            f"not {MODEL_CALLS}: the figures would not mean what they say"
        )
    critical = CRITICAL_ROUNDS * latency
    per_check_serial = PER_CHECK_CALLS * latency
    return {
        "wall_s": round(wall, 3),
        "critical_path_s": round(critical, 3),
        "ratio": round(wall / critical, 2) if critical else None,
        "serial_wall_s": round(serial, 3),
        "speedup": round(serial / wall, 2) if wall else None,
        "speedup_bound": round(MODEL_CALLS / CRITICAL_ROUNDS, 2),
        "per_check_serial_s": round(per_check_serial, 3),
        "speedup_vs_per_check_serial": round(per_check_serial / wall, 2) if wall else None,
    }


def format_deep_report(result: dict[str, Any]) -> str:
    """The figures as a few readable lines."""
    return "\n".join(
        [
            f"bench deep: {HYPOTHESES} hypotheses x {CHECKS} checks, fake LLM at fixed latency",
            f"wall time            {result['wall_s']:.3f} s",
            f"critical path bound  {result['critical_path_s']:.3f} s "
            f"({CRITICAL_ROUNDS} model rounds; ratio {result['ratio']}, target <= 1.15)",
            f"concurrency 1        {result['serial_wall_s']:.3f} s "
            f"({MODEL_CALLS} model calls; speedup {result['speedup']}x, "
            f"at most {result['speedup_bound']}x)",
            f"per-check design     {result['per_check_serial_s']:.3f} s "
            f"({PER_CHECK_CALLS} calls x latency, serial; "
            f"speedup {result['speedup_vs_per_check_serial']}x, target >= 3)",
        ]
    )
