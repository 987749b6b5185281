"""What each `whytree bench NAME` runs: its runner and its report formatter.

The runners import bot and the test fakes (fake Telegram and LLM servers), so only
`benchmarks.cli.run_bench` imports this module, when a benchmark runs.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from benchmarks.alerts import format_alerts_report, run_alerts_bench
from benchmarks.deep import format_deep_report, run_deep_bench
from benchmarks.incidents.runner import (
    default_cases,
    format_incidents_report,
    run_incidents_bench,
)
from benchmarks.memory import format_memory_report, run_memory_bench
from benchmarks.quick import format_quick_report, run_quick_bench
from benchmarks.reflection import format_reflection_report, run_reflection_bench
from benchmarks.scratch import scratch_server
from benchmarks.strategy.runner import format_strategy_report, run_strategy_bench
from benchmarks.tree_pictures import format_tree_report, run_tree_bench
from benchmarks.understanding.runner import (
    HOLDOUT,
    TUNING,
    format_understanding_report,
    run_understanding_bench,
)
from bot.app import build_chat_model
from bot.config import Settings

Figures = dict[str, Any]
Runner = Callable[[Settings, argparse.Namespace], Awaitable[Figures]]


async def _quick(settings: Settings, args: argparse.Namespace) -> Figures:
    return await run_quick_bench(
        chats=args.chats,
        questions=args.questions,
        llm_latency_ms=args.llm_latency_ms,
        routing=args.routing,
    )


async def _deep(settings: Settings, args: argparse.Namespace) -> Figures:
    concurrency = args.concurrency or settings.model_concurrency
    async with scratch_server() as dsn:
        return await run_deep_bench(
            dsn=dsn,
            latency_ms=args.latency_ms,
            concurrency=concurrency,
            tool_concurrency=settings.tool_concurrency,
        )


async def _incidents(settings: Settings, args: argparse.Namespace) -> Figures:
    """On --cases, or on a freshly generated set; no LLM (the runbook planner)."""
    with tempfile.TemporaryDirectory(prefix="whytree-cases-") as scratch:
        cases = args.cases or default_cases(Path(scratch), seed=args.seed)
        async with scratch_server() as dsn:
            return await run_incidents_bench(cases, dsn=dsn)


async def _reflection(settings: Settings, args: argparse.Namespace) -> Figures:
    async with scratch_server() as dsn:
        return await run_reflection_bench(dsn=dsn, cases_dir=args.cases)


async def _memory(settings: Settings, args: argparse.Namespace) -> Figures:
    sizes = tuple(int(size) for size in args.sizes.split(","))
    async with scratch_server() as dsn:
        return await run_memory_bench(dsn, sizes=sizes)


async def _strategy(settings: Settings, args: argparse.Namespace) -> Figures:
    model = build_chat_model(settings)
    try:
        return await run_strategy_bench(args.cases, model)
    finally:
        if model is not None:
            await model.aclose()


async def _understanding(settings: Settings, args: argparse.Namespace) -> Figures:
    paths = args.cases or [HOLDOUT, TUNING]
    with tempfile.TemporaryDirectory(prefix="whytree-understanding-") as scratch:
        async with scratch_server() as dsn:
            return await run_understanding_bench(paths, dsn=dsn, data_dir=Path(scratch))


async def _alerts(settings: Settings, args: argparse.Namespace) -> Figures:
    """The half of the alerts sent at once, then all again (Alertmanager's repeats)."""
    async with scratch_server() as dsn:
        return await run_alerts_bench(
            dsn=dsn, alerts=max(1, args.alerts // 2), distinct=max(1, args.distinct),
            group=max(1, args.group),
        )  # fmt: skip


async def _tree(settings: Settings, args: argparse.Namespace) -> Figures:
    return await run_tree_bench(runs=max(1, args.runs))


BENCHES: dict[str, tuple[Runner, Callable[[Figures], str]]] = {
    "quick": (_quick, format_quick_report),
    "deep": (_deep, format_deep_report),
    "incidents": (_incidents, format_incidents_report),
    "reflection": (_reflection, format_reflection_report),
    "memory": (_memory, format_memory_report),
    "strategy": (_strategy, format_strategy_report),
    "understanding": (_understanding, format_understanding_report),
    "tree": (_tree, format_tree_report),
    "alerts": (_alerts, format_alerts_report),
}
