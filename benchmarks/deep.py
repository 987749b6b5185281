"""`whytree bench deep`: does the wall time of a deep analysis follow the tree's critical path?

The fake OpenAI server answers every request after a fixed latency L and is
scripted (`DeepLLMScript`) to grow 3 hypotheses x 3 checks through the real
LLM planner and OpenAI adapter; trees are saved to PostgreSQL (the `dsn`
argument, migrated here). The checks run on a stand-in tool that answers
instantly with one row, and the bench's sessions do not wait for commits to
reach the disk (``synchronous_commit=off``, unless `durable_commits`), so the
figures measure the explorer's scheduling of LLM calls, not a data source or
the disk. Every change is still written to PostgreSQL, in order. Before the
clock starts, one request warms up the SDK and the start-up heap is frozen for
the garbage collector (`gc.freeze`), so one-off costs and random full
collections do not blur the figures.

The critical path is the longest chain of LLM calls that must follow each
other: propose hypotheses -> propose checks -> interpret a result ->
synthesis, i.e. 4 rounds, so ``critical_path_s = 4 x L``. The 14 calls
(1 + 3 + 9 + 1) take 14 x L one after another, which is what concurrency 1
measures. Note the arithmetic at the default concurrency of 4: the 9
interpretations need at least 3 rounds of 4 slots, so the best possible wall
time is 6 x L (ratio 1.5, speedup 2.3); the targets (ratio <= 1.3, speedup
>= 3) need at least 9 slots, where the bound is 4 x L (speedup 3.5).
"""

from __future__ import annotations

import gc
import json
import time
from typing import Any

import asyncpg

from benchmarks.deep_script import DeepLLMScript, ScriptedCheck, ScriptedHypothesis
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.explore.budgets import Budgets
from reasoning_core.explore.policy import ExplorationPolicy
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.planners.contract import PlanningContext
from reasoning_core.planners.llm.planner import LLMPlanner
from reasoning_core.ports import ChatMessage
from reasoning_core.tools.base import ToolRequest, ToolResult
from storage.migrate import apply_migrations
from storage.trees import PgTreeStore
from tests.fakes.openai_server import FakeOpenAIServer

#: propose hypotheses -> propose checks -> interpret -> synthesis.
CRITICAL_ROUNDS = 4
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
    """3 hypotheses x 3 checks: the first confirmed, the others refuted."""
    hypotheses = []
    for h, (key, title) in enumerate(
        (("outage", "Cell outage"), ("demand", "Demand fell"), ("neighbour", "Neighbour change"))
    ):
        checks = [
            ScriptedCheck(
                key=f"{key}_{c}",
                description=f"{title} check {c}",
                query=f"SELECT {h * 3 + c} AS value",
                verdict="confirmed" if h == 0 else "refuted",
                strength=0.8,
                evidence=f"value 42 in check {c}",
            )
            for c in range(1, 4)
        ]
        hypotheses.append(ScriptedHypothesis(key=key, title=title, prior=0.4, checks=checks))
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
    dsn: str, *, latency_s: float, concurrency: int, durable_commits: bool = False
) -> tuple[float, int]:
    """Seconds one deep analysis takes, and the LLM requests it made."""
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
                concurrency=concurrency,
            )
            ctx = PlanningContext(question="Why did traffic drop?", goal="Find the cause")
            started = time.perf_counter()
            async for event in analyst.run(ctx, user_id=1, chat_id=1):
                if event.answer is not None and event.answer.error:
                    raise RuntimeError(f"the bench analysis failed: {event.answer.text}")
            return time.perf_counter() - started, llm.request_count - 1
        finally:
            await pool.close()
            await model.aclose()


async def run_deep_bench(
    *, dsn: str, latency_ms: float = 100, concurrency: int = 4, durable_commits: bool = False
) -> dict[str, Any]:
    """Wall time at `concurrency` and at 1, against the critical path of the 3 x 3 tree."""
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
        wall, _ = await timed_run(
            dsn, latency_s=latency, concurrency=concurrency, durable_commits=durable_commits
        )
        serial, _ = await timed_run(
            dsn, latency_s=latency, concurrency=1, durable_commits=durable_commits
        )
    finally:
        gc.unfreeze()
    critical = CRITICAL_ROUNDS * latency
    return {
        "wall_s": round(wall, 3),
        "critical_path_s": round(critical, 3),
        "ratio": round(wall / critical, 2) if critical else None,
        "serial_wall_s": round(serial, 3),
        "speedup": round(serial / wall, 2) if wall else None,
    }


def format_deep_report(result: dict[str, Any]) -> str:
    """The figures as a few readable lines."""
    return "\n".join(
        [
            "bench deep: 3 hypotheses x 3 checks, fake LLM at fixed latency",
            f"wall time            {result['wall_s']:.3f} s",
            f"critical path bound  {result['critical_path_s']:.3f} s "
            f"(ratio {result['ratio']}, target <= 1.3)",
            f"concurrency 1        {result['serial_wall_s']:.3f} s "
            f"(speedup {result['speedup']}x, target >= 3)",
        ]
    )
