"""A system-lab fault on one service: the control file its service reads
(lab/system/control.py), held for the fault's seconds, then removed — also when the fault is
cleared (SIGTERM: `whytree lab clear` kills this process's group) or `--clear` is run.

    python -m lab.system.chaos --lab DIR --target SERVICE --kind KIND --seconds N
        [--direction inbound|outbound]
    python -m lab.system.chaos --lab DIR --target SERVICE --clear

The file's `until` bounds the fault even if this process is killed with SIGKILL: the
service ends it by itself then. Nothing outside the lab is touched: the file is under the
lab's directory; a CPU hog or a leak is the service's own child, in its process group and
cgroups; the disk filler writes on the lab's own size-limited disk.
"""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from lab.system.kinds import KINDS, SWITCH

#: The memory leak's rounds: each grows 8 MiB/s until the service's memory cgroup limit
#: (system_lab.py) OOM-kills it, then the service's worker "restarts" 5 s later.
LEAK_ROUNDS = 6


def leak_loop(seconds: int) -> str:
    """A leaking worker of the service, OOM-killed at its limit and started again (at most
    `LEAK_ROUNDS` times, none past `seconds`)."""
    py = shlex.quote(sys.executable)
    leak = f"{py} -P -m lab.leak --step-mb 4 --every-s 0.5 --max-mb 512 --seconds 40"
    return (
        f"end=$((SECONDS + {seconds})); for i in $(seq {LEAK_ROUNDS}); do "
        f'[ "$SECONDS" -ge "$end" ] && break; {leak}; sleep 5; done'
    )


def control_file(lab: Path, target: str) -> Path:
    return lab / "control" / f"{target}.json"


def fill_file(disk: str, target: str) -> Path:
    return Path(disk) / f"{target}.fill"


def switch(
    kind: str, *, seconds: int, direction: str, disk: str | None, target: str
) -> dict[str, Any]:
    """The control file's content for `kind` on `target`, for `seconds`."""
    body: dict[str, Any] = {"kind": kind, "until": time.time() + seconds, **SWITCH[kind]}
    if kind == "delay":
        body["direction"] = direction
    if kind == "cpu":
        body["child"] = ["stress-ng", "--cpu", "2", "--timeout", f"{seconds}s", "--quiet"]
    elif kind == "memory":
        body["child"] = ["bash", "-c", leak_loop(seconds)]
    elif kind == "disk" and disk:
        body["child"] = [
            sys.executable, "-P", "-m", "lab.system.fill",
            "--file", str(fill_file(disk, target)), "--seconds", str(seconds),
        ]  # fmt: skip
    return body


def _disk(lab: Path) -> str | None:
    try:
        state = json.loads((lab / "state.json").read_text())
    except (OSError, ValueError):
        return None
    mount = state.get("mount")
    return str(mount) if mount else None


def clear(lab: Path, target: str) -> None:
    control_file(lab, target).unlink(missing_ok=True)
    disk = _disk(lab)
    if disk:
        fill_file(disk, target).unlink(missing_ok=True)


def _stop(_signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(0)


def main() -> None:
    parser = argparse.ArgumentParser(prog="lab.system.chaos")
    parser.add_argument("--lab", type=Path, required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--kind", choices=sorted(KINDS))
    parser.add_argument("--direction", default="inbound", choices=("inbound", "outbound"))
    parser.add_argument("--seconds", type=int, default=120)
    parser.add_argument("--clear", action="store_true")
    args = parser.parse_args()
    if args.clear or not args.kind:
        clear(args.lab, args.target)
        return
    seconds = max(1, min(args.seconds, 900))
    disk = _disk(args.lab)
    if args.kind == "disk" and not disk:
        print("the lab has no size-limited disk: the disk fault cannot run", file=sys.stderr)  # noqa: T201
        sys.exit(3)
    path = control_file(args.lab, args.target)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = switch(
        args.kind, seconds=seconds, direction=args.direction, disk=disk, target=args.target
    )
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, _stop)
    try:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(body), encoding="utf-8")
        tmp.replace(path)
        print(f"{args.kind} on {args.target} for {seconds} s: {json.dumps(body)}", flush=True)  # noqa: T201
        time.sleep(seconds)
    finally:
        clear(args.lab, args.target)


if __name__ == "__main__":
    main()
