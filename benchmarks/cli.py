"""`whytree bench NAME`: run a benchmark, print readable figures or one JSON object."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.deep import format_deep_report, run_deep_bench
from benchmarks.incidents.runner import (
    default_cases,
    format_incidents_report,
    run_incidents_bench,
)
from benchmarks.memory import format_memory_report, run_memory_bench
from benchmarks.quick import format_quick_report, run_quick_bench
from benchmarks.scratch import scratch_server
from benchmarks.strategy.runner import (
    CasesFileError,
    format_strategy_report,
    run_strategy_bench,
)
from bot.app import build_chat_model
from bot.config import Settings


async def run_bench(settings: Settings, args: argparse.Namespace) -> int:
    if args.bench == "quick":
        result = await run_quick_bench(chats=args.chats, questions=args.questions)
        _emit(result, args.json, format_quick_report)
        return 0
    if args.bench == "deep":
        concurrency = args.concurrency or settings.reasoning_concurrency
        async with scratch_server() as dsn:
            result = await run_deep_bench(
                dsn=dsn, latency_ms=args.latency_ms, concurrency=concurrency
            )
        _emit(result, args.json, format_deep_report)
        return 0
    if args.bench == "incidents":
        result = await _incidents(args)
        _emit(result, args.json, format_incidents_report)
        return 0
    if args.bench == "memory":
        sizes = tuple(int(size) for size in args.sizes.split(","))
        async with scratch_server() as dsn:
            result = await run_memory_bench(dsn, sizes=sizes)
        _emit(result, args.json, format_memory_report)
        return 0
    if args.bench == "strategy":
        model = build_chat_model(settings)
        try:
            result = await run_strategy_bench(args.cases, model)
        except CasesFileError as e:
            print(f"whytree bench strategy: {e}", file=sys.stderr)
            return 2
        finally:
            if model is not None:
                await model.aclose()
        _emit(result, args.json, format_strategy_report)
        return 0
    raise AssertionError(f"unknown benchmark {args.bench}")


async def _incidents(args: argparse.Namespace) -> dict[str, Any]:
    """On --cases, or on a freshly generated set; no LLM (the runbook planner)."""
    with tempfile.TemporaryDirectory(prefix="whytree-cases-") as scratch:
        cases = args.cases or default_cases(Path(scratch), seed=args.seed)
        async with scratch_server() as dsn:
            return await run_incidents_bench(cases, dsn=dsn)


def _emit(result: dict[str, Any], as_json: bool, fmt: Any) -> None:
    print(json.dumps(result) if as_json else fmt(result))
