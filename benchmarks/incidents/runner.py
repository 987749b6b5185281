"""`whytree bench incidents`: does deep analysis name the right cause of a cell's traffic drop?

Each case directory (benchmarks/incidents/case.py) is loaded into a fresh
`demo` schema and its question goes through `DeepAnalyst` with the runbook
planner (no LLM). With a `chat_model`, as whytree runs with a model: the question is
routed first (StrategySelector; a case the model routes away from the deep path is
scored as an error), then analysed by the runbooks first and the model in addition
(RunbookFirstPlanner, the runbook planner as its fallback, the runbooks as guidance).

Figures (`metrics.py` defines them exactly): AC@1, AC@3, accuracy on `none`
cases, Brier score and ECE of the answer's confidence, and mean checks (tool
runs) per case.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import asyncpg

from benchmarks.incidents.case import IncidentCase, find_cases, read_case
from benchmarks.incidents.generate import generate_cases
from benchmarks.incidents.metrics import CaseResult, figures, format_figures
from demo.loader import load_case_dir
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import AnswerEvent
from reasoning_core.models import Answer
from reasoning_core.planners.llm.guidance import runbook_guidance
from reasoning_core.planners.llm.planner import LLMPlanner
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.planners.runbook_first import RunbookFirstPlanner
from reasoning_core.ports import ChatModel, Planner
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.reflection.reflector import ReflectionSettings
from reasoning_core.runbooks import RunbookSet, load_runbooks
from reasoning_core.strategy.selector import StrategySelector
from reasoning_core.tools.base import Tool, ToolRequest, ToolResult
from reasoning_core.understanding import KnownNames, understand
from reasoning_core.understanding.request import Request
from storage.migrate import apply_migrations
from storage.pool import create_pool
from storage.sql_tool import PgSqlTool
from storage.trees import PgTreeStore

#: `default_cases` writes this many cases: every scenario of the catalogue twice.
DEFAULT_COUNT = 44
_USER = 1
#: STRATEGY_TIMEOUT_SEC's default: how long the routing call may take.
ROUTING_TIMEOUT_SEC = 10.0


class CountingTool:
    """Counts the runs of a tool (the bench's "checks per case")."""

    def __init__(self, inner: Tool) -> None:
        self.name = inner.name
        self._inner = inner
        self.runs = 0

    async def run(self, request: ToolRequest) -> ToolResult:
        self.runs += 1
        return await self._inner.run(request)


def default_cases(tmp_dir: Path, *, seed: int | None = None, count: int = DEFAULT_COUNT) -> Path:
    """A freshly generated case set under `tmp_dir` (a random seed unless one is given)."""
    chosen = seed if seed is not None else random.SystemRandom().randrange(1, 1_000_000)
    out = tmp_dir / f"incidents-seed-{chosen}"
    generate_cases(out, seed=chosen, count=count)
    return out


async def run_incidents_bench(
    cases_dir: Path,
    *,
    dsn: str,
    chat_model: ChatModel | None = None,
    reflection: ReflectionSettings | None = None,
    times: list[float] | None = None,
) -> dict[str, Any]:
    """Run every case under `cases_dir` on the database `dsn`; the figures and per-case rows.

    `times` (when given) gets each case's wall time in seconds, routing included.

    The database gets the migrations (trees are saved) and a `demo` schema that
    is replaced case by case; `reflection` turns reflection checkpoints on (None:
    off). Keys: cases, ac_at_1, ac_at_3, none_accuracy,
    brier, ece, mean_checks, results [{case, expected, predicted, confidence, correct}].
    """
    paths = find_cases(Path(cases_dir))
    conn = await asyncpg.connect(dsn)
    try:
        await apply_migrations(conn)
    finally:
        await conn.close()
    pool = await create_pool(dsn, min_size=1, max_size=6)
    sql = await PgSqlTool.connect(dsn)
    runbooks = load_runbooks()
    results: list[CaseResult] = []
    try:
        for path in paths:
            case = read_case(path)
            await load_case_dir(pool, path)
            started = time.monotonic()
            results.append(
                await _run_case(
                    path.name,
                    case,
                    pool=pool,
                    sql=sql,
                    runbooks=runbooks,
                    chat_model=chat_model,
                    reflection=reflection,
                )
            )
            if times is not None:
                times.append(time.monotonic() - started)
    finally:
        await sql.close()
        await pool.close()
    return figures(results)


async def _run_case(
    name: str,
    case: IncidentCase,
    *,
    pool: asyncpg.Pool[Any],
    sql: PgSqlTool,
    runbooks: RunbookSet,
    chat_model: ChatModel | None,
    reflection: ReflectionSettings | None = None,
) -> CaseResult:
    tool = CountingTool(sql)
    tools: Mapping[str, Tool] = {"sql": tool}
    runbook = RunbookPlanner(runbooks, tools=tools)
    planner: Planner = runbook
    fallback: Planner | None = None
    guidance = None
    request = understand(case.question, await _known_names(pool), language=case.language)
    if chat_model is not None:
        if not await _routed_deep(chat_model, request):
            return CaseResult.of(name, case, None, checks=tool.runs)
        schema = await sql.describe_schema(("demo",))
        model = LLMPlanner(chat_model, schema_description=schema, tools=("sql",))
        planner = RunbookFirstPlanner(runbook, model)
        fallback = runbook
        guidance = runbook_guidance(runbooks, request, language=case.language)
    analyst = DeepAnalyst(
        tree_store=PgTreeStore(pool),
        planner=planner,
        fallback_planner=fallback,
        tools=tools,
        reflection=reflection,
        critic=chat_model,
    )
    ctx = PlanningContext(
        question=case.question, goal=case.question, language=case.language, guidance=guidance
    )
    answer: Answer | None = None
    async for event in analyst.run(ctx, user_id=_USER, chat_id=_USER):
        if isinstance(event, AnswerEvent):
            answer = event.answer
    return CaseResult.of(name, case, answer, checks=tool.runs)


async def _known_names(pool: asyncpg.Pool[Any]) -> KnownNames:
    """The case's cells and sites, as the bot's catalogue links them."""
    rows = await pool.fetch("SELECT cellname, site FROM demo.cells")
    return KnownNames(
        names={
            "cell": {r["cellname"].lower(): r["cellname"] for r in rows},
            "site": {r["site"].lower(): r["site"] for r in rows},
        },
        parents={"cell": {r["cellname"]: r["site"] for r in rows}},
    )


async def _routed_deep(chat_model: ChatModel, request: Request) -> bool:
    """Whether whytree, with this model, takes the question to the deep path."""
    selector = StrategySelector(
        chat_model=chat_model,
        enabled=True,
        timeout_sec=ROUTING_TIMEOUT_SEC,
        cache_ttl_sec=0,
        cache_size=0,
    )
    decision, _, _ = await selector.decide_and_understand(request, user_id=_USER, project="bench")
    return decision.strategy == "deep"


def format_incidents_report(result: Mapping[str, Any]) -> str:
    """Per-case lines, then the figures."""
    return format_figures(result)
