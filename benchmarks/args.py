"""`whytree bench` arguments: kept apart from the runners, which load test fakes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.strategy.runner import DEFAULT_CASES


def add_bench_parsers(bench: Any) -> None:
    """Register the benchmark subcommands on the `bench` subparsers object."""
    quick = bench.add_parser("quick", help="throughput and latency vs a bare aiogram bot")
    quick.add_argument("--chats", type=int, default=50)
    quick.add_argument("--questions", type=int, default=5)
    quick.add_argument("--json", action="store_true")
    deep = bench.add_parser("deep", help="deep-analysis wall time vs its critical path")
    deep.add_argument("--latency-ms", type=float, default=100.0)
    deep.add_argument(
        "--concurrency", type=int, default=None, help="default REASONING_CONCURRENCY"
    )
    deep.add_argument("--json", action="store_true")
    incidents = bench.add_parser("incidents", help="incident cases: AC@1, AC@3, Brier, ECE")
    incidents.add_argument("--cases", type=Path, default=None, help="default: a fresh set")
    incidents.add_argument("--seed", type=int, default=None, help="seed of the fresh set")
    incidents.add_argument("--json", action="store_true")
    reflection = bench.add_parser("reflection", help="incident cases with reflection on and off")
    reflection.add_argument("--cases", type=Path, default=None, help="default: a fresh set")
    reflection.add_argument("--json", action="store_true")
    memory = bench.add_parser("memory", help="memory retrieval latency, recall and prompt budget")
    memory.add_argument(
        "--sizes", default="10000,100000,1000000", help="memory rows per run, comma-separated"
    )
    memory.add_argument("--json", action="store_true")
    strategy = bench.add_parser("strategy", help="strategy selection on a labelled set")
    strategy.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    strategy.add_argument("--json", action="store_true")
