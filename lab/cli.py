"""`whytree lab up | status | inject FAULT | clear | down`: the lab from the command line.
The lab lives in the data directory (WHYTREE_DATA_DIR/lab); Alertmanager posts to the
receiver on API_LISTEN with ALERT_WEBHOOK_TOKEN."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from lab import config
from lab.fault import FAULTS_DIR, FaultFileError, clear, find_fault, inject
from lab.lab import Lab, LabError, monitor_dsn
from lab.rules import LabRules, RuleFileError, load_rules
from lab.system.rules import system_rules
from lab.system.system_lab import SystemLab


def add_lab_parsers(sub: Any) -> None:
    lab = sub.add_parser("lab", help="a live lab: real exporters, alert rules and faults")
    actions = lab.add_subparsers(dest="lab", required=True, metavar="ACTION")
    up = actions.add_parser("up", help="start the lab on loopback")
    add_rules_options(up)
    up.add_argument(
        "--system",
        action="store_true",
        help="the system lab: eight services in Online Boutique's shape behind nginx, with "
        "Redis and PostgreSQL, their calls in Istio's metrics, its own alert rules "
        "(lab/system/; faults name a kind and a target: lab/faults/system/)",
    )
    actions.add_parser("status", help="the lab's processes, ports and running fault")
    inject_ = actions.add_parser("inject", help="start a fault (a name or a fault file)")
    inject_.add_argument("fault")
    actions.add_parser("clear", help="stop the running fault")
    actions.add_parser("down", help="stop every process of the lab and remove its mounts")


def add_rules_options(parser: Any) -> None:
    """`--rules FILE…` and `--max-for DURATION` (lab up, bench live)."""
    parser.add_argument(
        "--rules",
        type=Path,
        nargs="+",
        default=[],
        metavar="FILE",
        help="Prometheus rule files (or PrometheusRule manifests) loaded instead of the "
        "lab's own rules",
    )
    parser.add_argument(
        "--max-for",
        default=None,
        metavar="DURATION",
        help="lower every alerting rule's `for:` to at most DURATION (e.g. 30s); "
        "expressions untouched",
    )


def rules_of(args: argparse.Namespace) -> LabRules | None:
    """The rules `--rules`/`--max-for` ask for (None: the lab's own, as they are);
    `RuleFileError` for a bad file or duration."""
    if not args.rules and args.max_for is None:
        return None
    return load_rules(args.rules, max_for=args.max_for, own=config.RULES)


def receiver_url(listen: str | None) -> str | None:
    if not listen:
        return None
    host, _, port = listen.rpartition(":")
    host = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
    return f"http://{host}:{port}/alerts/alertmanager"


def run_lab(
    data_dir: Path, listen: str | None, token: str | None, args: argparse.Namespace
) -> int:
    lab = Lab(data_dir / "lab")
    if lab.state.exists() and lab.state.read().get("system"):
        lab = SystemLab(lab.root)  # its down removes its CPU cgroups too
    try:
        return _ACTIONS[args.lab](lab, listen, token, args)
    except (LabError, FaultFileError, RuleFileError) as e:
        print(f"whytree lab {args.lab}: {e}", file=sys.stderr)
        return 2


def _up(lab: Lab, listen: str | None, token: str | None, args: argparse.Namespace) -> int:
    if getattr(args, "system", False):
        return _up_system(lab, listen, token, args)
    rules = rules_of(args)  # a bad file stops here, before anything starts
    url = receiver_url(listen)
    if url is None:
        print("API_LISTEN is not set: alerts go nowhere until whytree serves its receiver")
    notes = lab.up(
        receiver_url=url or "http://127.0.0.1:9/alerts/alertmanager", token=token, rules=rules
    )
    for note in notes:
        print(f"note: {note}")
    _print_status(lab)
    return 0


def _up_system(lab: Lab, listen: str | None, token: str | None, args: argparse.Namespace) -> int:
    own = system_rules()
    rules = load_rules(args.rules, max_for=args.max_for, own=own)  # a bad file stops here
    url = receiver_url(listen)
    if url is None:
        print("API_LISTEN is not set: alerts go nowhere until whytree serves its receiver")
    system = SystemLab(lab.root)
    for note in system.up_system(receiver_url=url, token=token, rules=rules):
        print(f"note: {note}")
    print(f"LOG_SOURCES={lab.root / 'log-sources.yaml'}")
    _print_status(lab)
    return 0


def _status(lab: Lab, listen: str | None, token: str | None, args: argparse.Namespace) -> int:
    return _print_status(lab)


def _print_status(lab: Lab) -> int:
    status = lab.status()
    if not status.up:
        print("the lab is down")
        return 1
    for name, pid, ok in status.processes:
        print(f"{'✓' if ok else '✗ dead'}  {name:<18} pid {pid}")
    print("ports: " + ", ".join(f"{k} {v}" for k, v in status.ports.items()))
    print(f"fault: {status.fault or 'none'}")
    print(f"LOG_SOURCES={lab.root / 'log-sources.yaml'}")
    if "pg" in status.ports:
        print(f"TOOLS_PG_MONITOR_DSN={monitor_dsn(status.ports['pg'])}")
    for note in status.notes:
        print(f"note: {note}")
    return 1 if status.dead else 0


def _inject(lab: Lab, listen: str | None, token: str | None, args: argparse.Namespace) -> int:
    system = isinstance(lab, SystemLab)
    fault = find_fault(args.fault, FAULTS_DIR / "system") if system else find_fault(args.fault)
    dead = lab.status().dead if lab.state.exists() else []
    pgid = inject(lab, fault)
    print(f"injected {fault.name} (process group {pgid}): {fault.breaks}")
    if dead:
        print(f"note: dead lab processes: {', '.join(dead)}")
    return 0


def _clear(lab: Lab, listen: str | None, token: str | None, args: argparse.Namespace) -> int:
    note = clear(lab)
    print(note or "cleared")
    return 0


def _down(lab: Lab, listen: str | None, token: str | None, args: argparse.Namespace) -> int:
    stopped = lab.down()
    print(f"stopped: {', '.join(stopped)}" if stopped else "the lab was down")
    return 0


_ACTIONS = {"up": _up, "status": _status, "inject": _inject, "clear": _clear, "down": _down}


async def run_lab_async(
    data_dir: Path, listen: str | None, token: str | None, args: argparse.Namespace
) -> int:
    return await asyncio.to_thread(run_lab, data_dir, listen, token, args)
