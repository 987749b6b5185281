"""What each `whytree bench NAME` runs: its runner and its report formatter.

The runners import bot and the fake servers (Telegram and LLM), so only
`benchmarks.cli.run_bench` imports this module, when a benchmark runs.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from benchmarks.alerts import (
    format_alerts_report,
    run_alerts_bench,
    run_alerts_via_alertmanager,
)
from benchmarks.chaos import format_chaos_report, run_chaos
from benchmarks.deep import format_deep_report, run_deep_bench
from benchmarks.incidents.runner import (
    default_cases,
    format_incidents_report,
    run_incidents_bench,
)
from benchmarks.live import run_live, run_live_ask, run_live_system
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
from benchmarks.with_model import format_side_by_side, model_under_test, side_by_side
from bot.config import Settings
from bot.wiring.app import build_chat_model
from lab.asking import format_ask_report, load_questions
from lab.bench import format_live_report
from lab.cli import rules_of
from lab.fault import FAULTS_DIR, load_faults
from lab.rules import load_rules
from lab.system.bench import check_targets, format_system_report
from lab.system.draw import draw
from lab.system.peers import peers_python
from lab.system.rules import system_rules
from lab.system.topology import NAMES
from reasoning_core.models import Usage

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


def _with_model(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "model", False) or getattr(args, "adversary", None))


async def _incidents(settings: Settings, args: argparse.Namespace) -> Figures:
    """On --cases, or on a freshly generated set; no LLM (the runbook planner). With
    --model or --adversary: without and with the model, side by side, on the same cases."""
    services = getattr(args, "suite", "telecom") == "services"
    run = run_services_bench if services else run_incidents_bench
    with tempfile.TemporaryDirectory(prefix="whytree-cases-") as scratch:
        make = default_services_cases if services else default_cases
        cases = args.cases or make(Path(scratch), seed=args.seed)
        async with scratch_server() as dsn:
            if not _with_model(args):
                return await run(cases, dsn=dsn)
            times_without: list[float] = []
            without = await run(cases, dsn=dsn, times=times_without)
            async with model_under_test(settings.llm, adversary=args.adversary) as under:
                times_with: list[float] = []
                with_model = await run(cases, dsn=dsn, chat_model=under.model, times=times_with)
                return side_by_side(
                    without, with_model, under, times_without=times_without, times_with=times_with
                )


async def _reflection(settings: Settings, args: argparse.Namespace) -> Figures:
    async with scratch_server() as dsn:
        return await run_reflection_bench(dsn=dsn, cases_dir=args.cases)


async def _memory(settings: Settings, args: argparse.Namespace) -> Figures:
    sizes = tuple(int(size) for size in args.sizes.split(","))
    async with scratch_server() as dsn:
        return await run_memory_bench(dsn, sizes=sizes)


async def _strategy(settings: Settings, args: argparse.Namespace) -> Figures:
    if _with_model(args):
        started = time.monotonic()
        without = await run_strategy_bench(args.cases, None)
        took_without = time.monotonic() - started
        async with model_under_test(settings.llm, adversary=args.adversary) as under:
            started = time.monotonic()
            with_model = await run_strategy_bench(args.cases, under.model)
            took = time.monotonic() - started
            cases = max(1, with_model["llm"]["cases"] if with_model.get("llm") else 1)
            return side_by_side(
                without,
                with_model,
                under,
                times_without=[took_without / cases],
                times_with=[took / cases],
            )
    model = build_chat_model(settings.llm)
    try:
        return await run_strategy_bench(args.cases, model)
    finally:
        if model is not None:
            await model.aclose()


async def _understanding(settings: Settings, args: argparse.Namespace) -> Figures:
    paths = args.cases or default_files()
    if not _with_model(args):
        with tempfile.TemporaryDirectory(prefix="whytree-understanding-") as scratch:
            async with scratch_server() as dsn:
                return await run_understanding_bench(paths, dsn=dsn, data_dir=Path(scratch))
    times_without: list[float] = []
    with tempfile.TemporaryDirectory(prefix="whytree-understanding-") as scratch:
        async with scratch_server() as dsn:
            without = await run_understanding_bench(
                paths, dsn=dsn, data_dir=Path(scratch), times=times_without
            )
    async with model_under_test(settings.llm, adversary=args.adversary) as under:
        times_with: list[float] = []
        used: list[Usage] = []
        with tempfile.TemporaryDirectory(prefix="whytree-understanding-") as scratch:
            async with scratch_server() as dsn:
                with_model = await run_understanding_bench(
                    paths,
                    dsn=dsn,
                    data_dir=Path(scratch),
                    llm=under.llm,
                    times=times_with,
                    usage=used,
                )
        return side_by_side(
            without,
            with_model,
            under,
            times_without=times_without,
            times_with=times_with,
            extra_usage=sum(used, Usage()),
        )


async def _alerts(settings: Settings, args: argparse.Namespace) -> Figures:
    """The half of the alerts sent at once, then all again (Alertmanager's repeats)."""
    async with scratch_server() as dsn:
        if args.via_alertmanager:
            return await run_alerts_via_alertmanager(
                dsn=dsn,
                alerts=max(1, args.alerts // 2),
                distinct=max(1, args.distinct),
                group=max(1, args.group),
            )
        return await run_alerts_bench(
            dsn=dsn,
            alerts=max(1, args.alerts // 2),
            distinct=max(1, args.distinct),
            group=max(1, args.group),
        )


async def _live(settings: Settings, args: argparse.Namespace) -> Figures:
    if args.system:
        return await _live_system(args)
    rules = rules_of(args)  # a bad rule file stops here, before anything starts
    peers = peers_python() if args.peers else None  # so does a missing peers' environment
    async with scratch_server() as dsn:
        if args.ask:
            sets = [load_questions(path) for path in args.ask]
            return await run_live_ask(dsn, sets=sets, faults_dir=args.faults)
        return await run_live(
            dsn,
            faults_dir=args.faults,
            rounds=max(1, args.rounds),
            runbooks=args.runbooks == "on",
            rules=rules,
            peers=peers,
        )


async def _live_system(args: argparse.Namespace) -> Figures:
    """`bench live --system`: faults drawn from a folder (lab/faults/system by default)."""
    rules = load_rules(args.rules, max_for=args.max_for, own=system_rules())
    faults = draw(
        load_faults(args.faults or FAULTS_DIR / "system"), sample=args.sample, seed=args.seed
    )
    check_targets(faults, NAMES)  # a target not in the lab stops here, before anything starts
    peers = peers_python() if args.peers else None
    async with scratch_server() as dsn:
        figures = await run_live_system(
            dsn, faults=faults, peers=peers, rules=rules, warm_up_s=args.warm_up
        )
    return {**figures, "sample": args.sample, "seed": args.seed}


def _live_report(figures: Figures, args: argparse.Namespace) -> str:
    if args.system:
        return format_system_report(figures)
    return format_ask_report(figures) if args.ask else format_live_report(figures)


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
    if "with_model" in result:
        return format_side_by_side(result)
    if "per_kind" in result:
        return format_services_report(result)
    return format_incidents_report(result)


def _understanding_report(figures: Figures, args: argparse.Namespace) -> str:
    if "with_model" in figures:
        return format_side_by_side(figures)
    return format_understanding_report(figures, show_failures=args.show_failures)


def _strategy_report(figures: Figures) -> str:
    if "with_model" not in figures:
        return format_strategy_report(figures)
    without, with_model = figures["without_model"], figures["with_model"]
    rules = without["heuristic"]["accuracy"]
    model = (with_model.get("llm") or {}).get("accuracy")
    usage = ", ".join(
        f"{k} {with_model.get(k)}" for k in ("model_calls", "prompt_tokens", "completion_tokens")
    )
    return f"strategy accuracy without model {rules:.3f} · with model {model}\n{usage}"


def _plain(fmt: Callable[[Figures], str]) -> Report:
    """A report that needs nothing from the command line but the figures."""
    return lambda figures, _args: fmt(figures)


BENCHES: dict[str, tuple[Runner, Report]] = {
    "quick": (_quick, _plain(format_quick_report)),
    "deep": (_deep, _plain(format_deep_report)),
    "incidents": (_incidents, _plain(_format_incidents)),
    "reflection": (_reflection, _plain(format_reflection_report)),
    "memory": (_memory, _plain(format_memory_report)),
    "strategy": (_strategy, _plain(_strategy_report)),
    "understanding": (_understanding, _understanding_report),
    "tree": (_tree, _plain(format_tree_report)),
    "alerts": (_alerts, _plain(format_alerts_report)),
    "chaos": (_chaos, _plain(format_chaos_report)),
    "scale": (_scale, _plain(format_scale_report)),
    "live": (_live, _live_report),
}
