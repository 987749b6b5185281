"""What each `whytree bench NAME` runs: its runner and its report formatter.

The runners import bot and the fake servers (Telegram and LLM), so only
`benchmarks.cli.run_bench` imports this module, when a benchmark runs.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from benchmarks.alerts import format_alerts_report, run_alerts_bench
from benchmarks.chaos import format_chaos_report, run_chaos
from benchmarks.deep import format_deep_report, run_deep_bench
from benchmarks.incidents.runner import (
    default_cases,
    format_incidents_report,
    run_incidents_bench,
)
from benchmarks.live import run_live
from benchmarks.memory import format_memory_report, run_memory_bench
from benchmarks.quick import format_quick_report, run_quick_bench
from benchmarks.reflection import format_reflection_report, run_reflection_bench
from benchmarks.scale import format_scale_report, run_scale
from benchmarks.scratch import scratch_server
from benchmarks.services.runner import default_cases as default_services_cases
from benchmarks.services.runner import format_services_report, run_services_bench
from benchmarks.strategy.runner import format_strategy_report, run_strategy_bench
from benchmarks.tree_pictures import format_tree_report, run_tree_bench
from benchmarks.understanding.runner import (
    default_files,
    format_understanding_report,
    run_understanding_bench,
)
from bot.config import Settings
from bot.wiring.app import build_chat_model
from lab.bench import format_live_report

Figures = dict[str, Any]
Runner = Callable[[Settings, argparse.Namespace], Awaitable[Figures]]
Report = Callable[[Figures, argparse.Namespace], str]


async def _quick(settings: Settings, args: argparse.Namespace) -> Figures:
    return await run_quick_bench(
        chats=args.chats,
        questions=args.questions,
        llm_latency_ms=args.llm_latency_ms,
        routing=args.routing,
    )


async def _deep(settings: Settings, args: argparse.Namespace) -> Figures:
    concurrency = args.concurrency or settings.deep.model_concurrency
    async with scratch_server() as dsn:
        return await run_deep_bench(
            dsn=dsn,
            latency_ms=args.latency_ms,
            concurrency=concurrency,
            tool_concurrency=settings.deep.tool_concurrency,
        )


async def _incidents(settings: Settings, args: argparse.Namespace) -> Figures:
    """On --cases, or on a freshly generated set; no LLM (the runbook planner)."""
    if getattr(args, "suite", "telecom") == "services":
        with tempfile.TemporaryDirectory(prefix="whytree-cases-") as scratch:
            cases = args.cases or default_services_cases(Path(scratch), seed=args.seed)
            async with scratch_server() as dsn:
                return await run_services_bench(cases, dsn=dsn)
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
    model = build_chat_model(settings.llm)
    try:
        return await run_strategy_bench(args.cases, model)
    finally:
        if model is not None:
            await model.aclose()


async def _understanding(settings: Settings, args: argparse.Namespace) -> Figures:
    paths = args.cases or default_files()
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


async def _live(settings: Settings, args: argparse.Namespace) -> Figures:
    async with scratch_server() as dsn:
        return await run_live(dsn, faults_dir=args.faults, rounds=max(1, args.rounds))


async def _tree(settings: Settings, args: argparse.Namespace) -> Figures:
    return await run_tree_bench(runs=max(1, args.runs))


async def _chaos(settings: Settings, args: argparse.Namespace) -> Figures:
    # The fake LLM's server logs every request a killed bot left half-sent: expected here.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    async with scratch_server() as dsn:
        chaos = await run_chaos(dsn, trials=max(1, args.trials), lease_sec=args.lease_sec)
    return chaos.as_dict()


async def _scale(settings: Settings, args: argparse.Namespace) -> Figures:
    counts = tuple(int(n) for n in args.replicas.split(",") if n.strip())
    async with scratch_server() as dsn:
        return await run_scale(
            dsn,
            replicas=counts,
            chats=args.chats,
            questions=args.questions,
            llm_latency=args.latency_ms / 1000,
        )


def _format_incidents(result: Figures) -> str:
    """The services suite's figures carry per-kind figures and the root accuracy too."""
    if "per_kind" in result:
        return format_services_report(result)
    return format_incidents_report(result)


def _understanding_report(figures: Figures, args: argparse.Namespace) -> str:
    return format_understanding_report(figures, show_failures=args.show_failures)


def _plain(fmt: Callable[[Figures], str]) -> Report:
    """A report that needs nothing from the command line but the figures."""
    return lambda figures, _args: fmt(figures)


BENCHES: dict[str, tuple[Runner, Report]] = {
    "quick": (_quick, _plain(format_quick_report)),
    "deep": (_deep, _plain(format_deep_report)),
    "incidents": (_incidents, _plain(_format_incidents)),
    "reflection": (_reflection, _plain(format_reflection_report)),
    "memory": (_memory, _plain(format_memory_report)),
    "strategy": (_strategy, _plain(format_strategy_report)),
    "understanding": (_understanding, _understanding_report),
    "tree": (_tree, _plain(format_tree_report)),
    "alerts": (_alerts, _plain(format_alerts_report)),
    "chaos": (_chaos, _plain(format_chaos_report)),
    "scale": (_scale, _plain(format_scale_report)),
    "live": (_live, _plain(format_live_report)),
}
