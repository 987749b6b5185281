"""`whytree bench incidents --suite services`: does deep analysis name the planted service fault?

Each case (benchmarks/services/case.py) is simulated again, ending this minute, turned into TSDB
blocks by promtool and served by a private `prometheus`; its question goes
through the understanding step (known services from Prometheus label values)
and `DeepAnalyst` with the runbook planner (no LLM), "now" being the data's end.

The answer's kind: `deploy_change` -> deploy, `slow_dependency` -> dependency,
`traffic_surge` -> surge, `container_trouble` -> its alternative that held
(cpu; memory or oom -> memory; crash_loop), `none` -> none. Figures as in
benchmarks/incidents/metrics.py (AC@1, AC@3, none accuracy, Brier, ECE, mean
checks), also per fault kind, and `root_accuracy`: the share of dependency cases
whose answer names the planted root service.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg

from benchmarks.incidents.metrics import CaseResult, figures, format_figures
from benchmarks.incidents.runner import CountingTool
from benchmarks.services.case import ServicesCase, find_cases, read_case
from benchmarks.services.generate import DEFAULT_COUNT, generate_cases
from demo.services.dataset import build_scenario_tsdb
from demo.services.prometheus import LocalPrometheus, PrometheusUnavailableError
from demo.services.prometheus import unavailable_reason as prometheus_unavailable
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import AnswerEvent
from reasoning_core.models import Answer, Tree
from reasoning_core.planners.llm.planner import LLMPlanner
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.planners.runbook.words import detail_of
from reasoning_core.planners.runbook_first import RunbookFirstPlanner
from reasoning_core.ports import ChatModel, Planner
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.runbooks import RunbookSet, load_runbooks
from reasoning_core.tools.base import Tool
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.understanding import understand
from reasoning_core.understanding.catalogue import EntityCatalogue
from storage.migrate import apply_migrations
from storage.pool import create_pool
from storage.trees import PgTreeStore

_USER = 1
_KINDS = {"deploy_change": "deploy", "slow_dependency": "dependency", "traffic_surge": "surge"}
_DETAILS = {"cpu": "cpu", "memory": "memory", "oom": "memory", "crash_loop": "crash_loop"}


def default_cases(tmp_dir: Path, *, seed: int | None = None, count: int = DEFAULT_COUNT) -> Path:
    """A freshly generated case set under `tmp_dir` (a random seed unless one is given)."""
    chosen = seed if seed is not None else random.SystemRandom().randrange(1, 1_000_000)
    out = tmp_dir / f"services-seed-{chosen}"
    generate_cases(out, seed=chosen, count=count)
    return out


def kind_of(hypothesis_id: str, tree: Tree | None, node_id: str | None) -> str:
    """The fault kind an answer's hypothesis stands for (see the module doc)."""
    if hypothesis_id in _KINDS:
        return _KINDS[hypothesis_id]
    if hypothesis_id == "container_trouble":
        detail = detail_of(tree, node_id) if tree is not None else None
        return _DETAILS.get(detail or "", "container_trouble")
    return hypothesis_id


def root_service(tree: Tree | None) -> str | None:
    """The root service a confirmed dependency walk named."""
    for node in tree.nodes.values() if tree else []:
        found = node.result
        if found is not None and found.confirmed and "root_service" in found.data:
            return str(found.data["root_service"])
    return None


async def run_services_bench(
    cases_dir: Path,
    *,
    dsn: str,
    chat_model: ChatModel | None = None,
    times: list[float] | None = None,
) -> dict[str, Any]:
    """Run every case under `cases_dir` (trees saved in the database `dsn`); the figures.

    With a `chat_model`, the runbooks first and the model in addition (RunbookFirstPlanner);
    `times` (when given) gets each case's wall time in seconds.

    Keys: cases, ac_at_1, ac_at_3, none_accuracy, brier, ece, mean_checks, per_kind
    {kind: {cases, ac_at_1, ac_at_3, brier, ece, mean_checks}}, root_accuracy,
    results [{case, expected, predicted, confidence, correct, root, expected_root}].
    """
    reason = prometheus_unavailable()
    if reason:
        raise PrometheusUnavailableError(reason)
    conn = await asyncpg.connect(dsn)
    try:
        await apply_migrations(conn)
    finally:
        await conn.close()
    pool = await create_pool(dsn, min_size=1, max_size=6)
    runbooks = load_runbooks()
    rows: list[tuple[ServicesCase, CaseResult, str | None]] = []
    try:
        for path in find_cases(Path(cases_dir)):
            case = read_case(path)
            started = time.monotonic()
            result, root = await _run_case(
                path.name, case, pool=pool, runbooks=runbooks, chat_model=chat_model
            )
            rows.append((case, result, root))
            if times is not None:
                times.append(time.monotonic() - started)
    finally:
        await pool.close()
    return summarise(rows)


async def _run_case(
    name: str,
    case: ServicesCase,
    *,
    pool: asyncpg.Pool[Any],
    runbooks: RunbookSet,
    chat_model: ChatModel | None = None,
) -> tuple[CaseResult, str | None]:
    scratch = Path(tempfile.mkdtemp(prefix="whytree-bench-tsdb-"))
    end = datetime.now(UTC).replace(second=0, microsecond=0)
    now = end - timedelta(minutes=1)  # the last sample
    try:
        await asyncio.to_thread(build_scenario_tsdb, case.scenario(end), scratch)
        async with LocalPrometheus(scratch) as prom:
            tool = CountingTool(PrometheusTool(prom.url))
            tools: Mapping[str, Tool] = {"prometheus": tool}
            known = await EntityCatalogue(sources=runbooks.name_sources, tools=tools).snapshot()
            tool.runs = 0  # the catalogue's query is not one of the case's checks
            runbook = RunbookPlanner(runbooks, tools=tools, clock=lambda: now)
            planner: Planner = runbook
            if chat_model is not None:
                model = LLMPlanner(chat_model, tools=("prometheus",))
                planner = RunbookFirstPlanner(runbook, model)
            analyst = DeepAnalyst(
                tree_store=PgTreeStore(pool),
                planner=planner,
                tools=tools,
                fallback_planner=runbook if planner is not runbook else None,
                critic=chat_model,
            )
            request = understand(case.question, known, language=case.language)
            ctx = PlanningContext(
                question=case.question,
                goal=case.question,
                language=case.language,
                request=request,
            )
            answer: Answer | None = None
            async for event in analyst.run(ctx, user_id=_USER, chat_id=_USER):
                if isinstance(event, AnswerEvent):
                    answer = event.answer
            checks = tool.runs
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    tree = None
    if answer is not None and answer.tree_id:
        tree = await PgTreeStore(pool).load(answer.tree_id)
    return _score(name, case, answer, tree, checks), root_service(tree)


def _score(
    name: str, case: ServicesCase, answer: Answer | None, tree: Tree | None, checks: int
) -> CaseResult:
    synthesis = answer.synthesis if answer is not None else None
    if answer is None or synthesis is None:
        return CaseResult(name, case.expected, "error", 0.0, (), checks)
    primary = kind_of(synthesis.primary.id, tree, synthesis.primary.node_id)
    ranked = [kind_of(r.id, tree, r.node_id) for r in synthesis.ranking] or [primary]
    top3 = ("none",) if primary == "none" else tuple(ranked[:3])
    return CaseResult(name, case.expected, primary, round(answer.confidence, 4), top3, checks)


def summarise(rows: Sequence[tuple[ServicesCase, CaseResult, str | None]]) -> dict[str, Any]:
    """The figures overall and per kind, root accuracy, and one row per case."""
    results = [r for _, r, _ in rows]
    out = figures(results)
    per_kind: dict[str, Any] = {}
    for kind in sorted({r.expected for r in results}):
        mine = figures([r for r in results if r.expected == kind])
        per_kind[kind] = {
            k: mine[k] for k in ("cases", "ac_at_1", "ac_at_3", "brier", "ece", "mean_checks")
        }
    propagation = [(c, root) for c, _, root in rows if c.expected_root]
    hits = sum(root == c.expected_root for c, root in propagation)
    out["per_kind"] = per_kind
    out["root_accuracy"] = round(hits / len(propagation), 4) if propagation else None
    for row, (case, _, root) in zip(out["results"], rows, strict=True):
        row["root"] = root
        row["expected_root"] = case.expected_root
    return out


def format_services_report(result: Mapping[str, Any]) -> str:
    """Per-case lines, the figures, then per kind."""
    lines = [format_figures(result)]
    root = result.get("root_accuracy")
    lines.append(f"root service  {'n/a' if root is None else f'{root:.3f}'} (dependency cases)")
    lines += ["", "per kind      cases  AC@1   AC@3   Brier   ECE    checks"]
    for kind, f in (result.get("per_kind") or {}).items():
        lines.append(
            f"{kind:<13} {f['cases']:>5}  {f['ac_at_1']:.3f}  {f['ac_at_3']:.3f}  "
            f"{f['brier']:.4f}  {f['ece']:.4f} {f['mean_checks']:.1f}"
        )
    return "\n".join(lines)
