"""`whytree bench`: the one way into benchmarks/ from the bot's CLI.

`add_bench_parsers` registers the subcommands; `run_bench` runs one and prints
readable figures, or one JSON object with --json. Importing this module is cheap:
the runners (`benchmarks.runners`), which import bot and the fake servers, load only
in `run_bench`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.strategy.runner import DEFAULT_CASES, CasesFileError
from bot.config import Settings
from demo.services.prometheus import PrometheusUnavailableError
from lab.cli import add_rules_options
from lab.fault import FaultFileError
from lab.lab import LabError
from lab.rules import RuleFileError
from lab.system.peers import PeersUnavailableError
from reasoning_core.errors import ConfigurationError

#: The adversarial models `--adversary` may name (benchmarks/harness/adversaries.py).
ADVERSARY_NAMES = ("decline", "quick", "clarify", "wrong-causes", "cautious", "echo")


def _model_options(parser: Any) -> None:
    """--model / --adversary: the figures without a model and with one, side by side."""
    parser.add_argument(
        "--model",
        action="store_true",
        help="also run with the configured model (OPENAI_BASE_URL, OPENAI_API_KEY, LLM_MODEL) "
        "and print without/with side by side",
    )
    parser.add_argument(
        "--adversary",
        choices=ADVERSARY_NAMES,
        default=None,
        help="like --model, with an adversarial fake model (perfect form, wrong substance)",
    )


def add_bench_parsers(bench: Any) -> None:  # noqa: PLR0915
    """Register the benchmark subcommands on the `bench` subparsers object."""
    quick = bench.add_parser("quick", help="throughput and latency vs a bare aiogram bot")
    quick.add_argument("--chats", type=int, default=50)
    quick.add_argument("--questions", type=int, default=5)
    quick.add_argument(
        "--llm-latency-ms",
        type=float,
        default=0.0,
        help="the fake model waits this long per call, then writes 50 tokens/s (0: instant)",
    )
    quick.add_argument(
        "--routing",
        choices=("rules", "model"),
        default="rules",
        help="rules: no routing call for the bench's definition question; "
        "model: one call routes and answers it",
    )
    quick.add_argument("--json", action="store_true")
    deep = bench.add_parser("deep", help="deep-analysis wall time vs its critical path")
    deep.add_argument("--latency-ms", type=float, default=100.0)
    deep.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="model calls at once; default MODEL_CONCURRENCY",
    )
    deep.add_argument("--json", action="store_true")
    incidents = bench.add_parser("incidents", help="incident cases: AC@1, AC@3, Brier, ECE")
    incidents.add_argument("--cases", type=Path, default=None, help="default: a fresh set")
    incidents.add_argument("--seed", type=int, default=None, help="seed of the fresh set")
    incidents.add_argument(
        "--suite",
        choices=("telecom", "services"),
        default="telecom",
        help="telecom: cell traffic drops (SQL); services: service faults on a real Prometheus",
    )
    incidents.add_argument("--json", action="store_true")
    _model_options(incidents)
    reflection = bench.add_parser("reflection", help="incident cases with reflection on and off")
    reflection.add_argument("--cases", type=Path, default=None, help="default: a fresh set")
    reflection.add_argument("--json", action="store_true")
    memory = bench.add_parser("memory", help="memory retrieval latency, recall and prompt budget")
    memory.add_argument(
        "--sizes", default="10000,100000,1000000", help="memory rows per run, comma-separated"
    )
    memory.add_argument("--json", action="store_true")
    tree = bench.add_parser(
        "tree", help="tree picture render times by tree size, and the report chart's"
    )
    tree.add_argument("--runs", type=int, default=3)
    tree.add_argument("--json", action="store_true")
    strategy = bench.add_parser("strategy", help="strategy selection on a labelled set")
    strategy.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    strategy.add_argument("--json", action="store_true")
    _model_options(strategy)
    alerts = bench.add_parser("alerts", help="a burst of Alertmanager alerts, many repeated")
    alerts.add_argument("--alerts", type=int, default=500, help="alerts in the burst")
    alerts.add_argument("--distinct", type=int, default=20, help="distinct cells alerted")
    alerts.add_argument("--group", type=int, default=10, help="alerts per notification")
    alerts.add_argument(
        "--via-alertmanager",
        action="store_true",
        help="through a real Alertmanager, then press the 1 h silence under every report",
    )
    alerts.add_argument("--json", action="store_true")
    understanding = bench.add_parser(
        "understanding", help="questions as people type them, answered end to end"
    )
    understanding.add_argument(
        "--cases",
        type=Path,
        action="append",
        default=None,
        help="a cases file (repeatable); default: the holdout (holdout.yaml, when it exists), "
        "then the tuning files (cases.yaml, retired_holdout.yaml)",
    )
    understanding.add_argument(
        "--show-failures", action="store_true", help="list every wrong case (not with --json)"
    )
    understanding.add_argument("--json", action="store_true")
    _model_options(understanding)
    chaos = bench.add_parser(
        "chaos", help="kill -9 and restart `whytree run` mid-answer: lost and duplicated answers"
    )
    chaos.add_argument("--trials", type=int, default=200)
    chaos.add_argument("--lease-sec", type=float, default=2.0, help="INBOX_LEASE_SEC")
    chaos.add_argument("--json", action="store_true")
    live = bench.add_parser(
        "live", help="faults injected into the live lab (docs/lab.md): AC@1, alert -> report"
    )
    live.add_argument("--faults", type=Path, default=None, help="a folder of fault files")
    add_rules_options(live)
    live.add_argument("--rounds", type=int, default=3)
    live.add_argument(
        "--ask",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="ask a question file's questions while each fault runs (the question path); "
        "repeat for several files, scored apart (lab/questions/)",
    )
    live.add_argument(
        "--runbooks",
        choices=("on", "off"),
        default="on",
        help="off: the shipped runbook pack switched off, the change scan alone "
        "(RUNBOOKS_SHIPPED=false)",
    )
    live.add_argument(
        "--peers",
        action="store_true",
        help="also run RCAEval's BARO and N-Sigma on every fault window and score all three "
        "by service: AC@1, AC@3, Avg@5 (`make peers` first; docs/benchmarks.md)",
    )
    live.add_argument(
        "--system",
        action="store_true",
        help="the system lab (lab up --system): faults of kind x target from --faults "
        "(lab/faults/system by default), the peers beside with --peers; service AC@1, AC@3, "
        "Avg@5 (docs/lab.md)",
    )
    live.add_argument(
        "--sample", type=int, default=None, help="--system: draw N of the folder's faults"
    )
    live.add_argument("--seed", type=int, default=0, help="--system: the draw's seed")
    live.add_argument(
        "--warm-up",
        type=float,
        default=420.0,
        metavar="SECONDS",
        help="--system: normal minutes before the first fault (default 420)",
    )
    live.add_argument("--json", action="store_true")
    scale = bench.add_parser("scale", help="webhook throughput with 1, 2, 4 replicas")
    scale.add_argument("--replicas", default="1,2,4", help="replica counts, comma-separated")
    scale.add_argument("--chats", type=int, default=40)
    scale.add_argument("--questions", type=int, default=3)
    scale.add_argument("--latency-ms", type=float, default=200.0, help="the fake LLM's")
    scale.add_argument("--json", action="store_true")


async def run_bench(settings: Settings, args: argparse.Namespace) -> int:
    """Run the named benchmark; print readable figures, or one JSON object with --json."""
    # The runners load bot and the fake servers (Telegram and LLM): only here.
    from benchmarks.runners import BENCHES  # noqa: PLC0415

    runner, fmt = BENCHES[args.bench]
    try:
        result = await runner(settings, args)
    except (
        CasesFileError,
        PrometheusUnavailableError,
        ConfigurationError,
        RuleFileError,
        PeersUnavailableError,
        FaultFileError,
        LabError,
    ) as e:
        print(f"whytree bench {args.bench}: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result) if args.json else fmt(result, args))
    return 0
