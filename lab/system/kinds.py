"""The system lab's fault kinds, as data: what each does to its target service (the control
file lab/system/chaos.py writes for it, lab/system/control.py), how long it takes to show
and lasts, what it needs, and the words a report that names its cause uses.

A fault file of the system lab names a kind and a target instead of start and stop
commands (docs/lab.md, "Faults of the system lab"):

    name: delay-stock          # optional: <kind>-<target>
    kind: delay
    target: stock
    direction: outbound        # delay only; inbound by default

and a grid file names kinds × targets: `grid: {kinds: [cpu, delay], targets: [stock, cart]}`.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lab.system.topology import NAMES


@dataclass(frozen=True)
class Kind:
    name: str
    #: what breaks, said of the target
    breaks: str
    cause: str
    cause_terms: tuple[str, ...]
    show_s: float = 60.0
    duration_s: float = 120.0
    #: a program the fault needs (its path), else None
    needs: str | None = None
    #: the fault needs the lab's size-limited disk
    needs_disk: bool = False
    logged: bool = False


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "cpu",
            "CPU: stress-ng as {target}'s child (in its process-exporter group) "
            "within its 1-core CPU cgroup",
            "cpu saturation",
            ("cpu", "процессор"),
            needs="/usr/bin/stress-ng",
        ),
        Kind(
            "memory",
            "memory: a leaking worker of {target}, OOM-killed at its memory cgroup's limit "
            "and started again",
            "memory exhaustion",
            ("memory", "oom", "памят"),
            logged=True,
        ),
        Kind(
            "disk",
            "disk: {target} fills the lab's size-limited disk",
            "disk full",
            ("disk", "filesystem", "space", "диск"),
            needs_disk=True,
        ),
        Kind(
            "delay",
            "delay on {target}'s {direction} path",
            "network delay",
            ("latency", "delay", "slow", "задержк", "медлен"),
            show_s=45.0,
        ),
        Kind(
            "loss",
            "half the connections to {target} reset before any answer",
            "connection resets",
            ("reset", "loss", "connection", "сброс", "соединен"),
            show_s=45.0,
            logged=True,
        ),
        Kind(
            "fd",
            "{target} out of file descriptors",
            "file descriptor exhaustion",
            ("file descriptor", "descriptor", "socket", "дескриптор"),
            show_s=45.0,
            logged=True,
        ),
        Kind(
            "exception",
            "a release of {target} that raises on every request",
            "a bad release",
            ("release", "exception", "error", "5xx", "релиз", "ошибк"),
            show_s=45.0,
            logged=True,
        ),
        Kind(
            "slow",
            "a release of {target} with a slow path on every request",
            "a slow release",
            ("release", "slow", "latency", "релиз", "медлен"),
            show_s=45.0,
        ),
    )
}
DIRECTIONS = ("inbound", "outbound")
#: What the control file asks for each kind (the delay's direction and the child added by
#: lab/system/chaos.py).
SWITCH: dict[str, dict[str, Any]] = {
    "cpu": {},
    "memory": {},
    "disk": {},
    "delay": {"delay_ms": 1500},
    "loss": {"loss": 0.5},
    "fd": {"fds": True},
    "exception": {"release": "v2-bad"},
    "slow": {"release": "v2-slow", "slow_ms": 1500},
}


class KindError(ValueError):
    """A system fault that names an unknown kind, target or direction."""


def expand(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A fault file's system faults: itself, or every kind × target of its `grid`."""
    grid = raw.get("grid")
    if grid is None:
        return [dict(raw)]
    if not isinstance(grid, dict):
        raise KindError("grid: a mapping with kinds and targets")
    kinds = grid.get("kinds") or []
    targets = grid.get("targets") or []
    if not isinstance(kinds, list) or not isinstance(targets, list) or not kinds or not targets:
        raise KindError("grid: kinds and targets, each a non-empty list")
    extra = {k: v for k, v in grid.items() if k not in ("kinds", "targets")}
    return [{"kind": k, "target": t, **extra} for k in kinds for t in targets]


def fault_fields(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The `Fault` fields (lab/fault.py) of one system fault: its commands run
    lab/system/chaos.py on the target."""
    kind_name = str(raw.get("kind", ""))
    target = str(raw.get("target", ""))
    if kind_name not in KINDS:
        raise KindError(f"kind {kind_name!r} is not one of {', '.join(KINDS)}")
    if target not in NAMES:
        raise KindError(
            f"target {target!r} is not a service of the system lab ({', '.join(NAMES)})"
        )
    kind = KINDS[kind_name]
    direction = str(raw.get("direction", "inbound"))
    if direction not in DIRECTIONS:
        raise KindError(f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    duration = min(float(raw.get("duration_s", kind.duration_s)), 900.0)
    suffix = "-out" if kind_name == "delay" and direction == "outbound" else ""
    chaos = '"$LAB_PYTHON" -P -m lab.system.chaos --lab "$LAB_DIR"'
    args = f"--target {shlex.quote(target)}"
    return {
        "name": str(raw.get("name") or f"{kind_name}{suffix}-{target}"),
        "breaks": kind.breaks.format(target=target, direction=direction),
        "cause": kind.cause,
        "cause_terms": kind.cause_terms,
        "component": target,
        "start": f"exec {chaos} {args} --kind {kind_name} --direction {direction} "
        f"--seconds {int(duration)}",
        "stop": f"{chaos} {args} --clear",
        "show_s": float(raw.get("show_s", kind.show_s)),
        "duration_s": duration,
        "logged": kind.logged,
        "kind": kind_name,
        "target": target,
    }


def missing_for(kind: str, *, disk: bool) -> str | None:
    """Why a fault of `kind` cannot run in this lab (a program or the disk missing), or None."""
    found = KINDS.get(kind)
    if found is None:
        return f"no kind {kind}"
    if found.needs and shutil.which(found.needs) is None:
        return f"{found.needs} is not installed (package {found.needs.rsplit('/', 1)[-1]})"
    if found.needs_disk and not disk:
        return "the lab has no size-limited disk (mount needs root)"
    return None
