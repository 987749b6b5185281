"""A system-lab service's fault switch: the lab owns its services, so a fault is a control
file the service reads (`LAB_DIR/control/<service>.json`, written by lab/system/chaos.py),
never a change to this machine outside the lab.

    {"kind": "delay", "until": 1764700000.0, "delay_ms": 1500, "direction": "inbound"}

The service looks at the file every `POLL_S` (a `stat`, no file descriptor: a service out of
descriptors still sees its fault cleared) and reads it when it changed. A fault ends when
the file goes or its `until` passes, whichever first: the service then kills its fault's
child process, closes the descriptors it held and answers as before. Every loop is bounded:
a child by its own timeout and by `until`, the descriptors by the service's open-files
limit (`FD_LIMIT`, set at its start), a fault by `MAX_FAULT_S`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("shop.fault")
POLL_S = 0.5
#: The service's open-files limit (its soft RLIMIT_NOFILE): what fd exhaustion runs into.
FD_LIMIT = 512
MAX_FAULT_S = 900.0
_CHILD_TERM_S = 3.0


@dataclass
class Switch:
    """What the fault asks of the service now (all off: no fault)."""

    kind: str | None = None
    until: float = 0.0
    #: delay: on the inbound path (requests reach it late) or the outbound (its calls and
    #: its answers leave late)
    delay_ms: float = 0.0
    direction: str = "inbound"
    #: loss: the share of requests whose connection is reset before any answer
    loss: float = 0.0
    #: a release: "exception" (a route raises) or "slow" (a slow path on every request)
    release: str | None = None
    slow_ms: float = 0.0
    #: exhaust the service's file descriptors
    fds: bool = False
    #: a program the service runs as its own child (stress-ng, a leak, the disk filler), in
    #: a process group of its own (still in the service's cgroups)
    child: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> Switch:
        child = raw.get("child") or []
        return cls(
            kind=str(raw.get("kind") or "") or None,
            until=min(float(raw.get("until", 0)), time.time() + MAX_FAULT_S),
            delay_ms=max(0.0, min(float(raw.get("delay_ms", 0)), 30_000.0)),
            direction="outbound" if raw.get("direction") == "outbound" else "inbound",
            loss=max(0.0, min(float(raw.get("loss", 0)), 1.0)),
            release=str(raw["release"]) if raw.get("release") else None,
            slow_ms=max(0.0, min(float(raw.get("slow_ms", 0)), 30_000.0)),
            fds=bool(raw.get("fds", False)),
            child=[str(a) for a in child] if isinstance(child, list) else [],
        )

    def inbound_delay_s(self) -> float:
        return self.delay_ms / 1000 if self.direction == "inbound" else 0.0

    def outbound_delay_s(self) -> float:
        return self.delay_ms / 1000 if self.direction == "outbound" else 0.0


def limit_fds(limit: int = FD_LIMIT) -> None:
    """Lower the service's soft open-files limit to `limit` (never above its hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    if soft == resource.RLIM_INFINITY or soft > want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


class Control:
    """The service's side of its control file."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.now = Switch()
        self._seen: float | None = None
        self._child: subprocess.Popen[bytes] | None = None
        self._held: list[int] = []

    def poll(self) -> None:
        """Look at the control file; start, change or end the fault it says."""
        if self.path is None:
            return
        try:
            mtime: float | None = os.stat(self.path).st_mtime
        except OSError:
            mtime = None
        if mtime is None or (self.now.kind and time.time() >= self.now.until):
            self._end()
            if mtime is None:
                self._seen = None
            return
        if mtime != self._seen:
            switch = self._read()
            if switch is not None:
                self._seen = mtime
                self._begin(switch)

    def _read(self) -> Switch | None:
        assert self.path is not None
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return Switch.parse(raw if isinstance(raw, dict) else {})
        except (OSError, ValueError, TypeError) as e:
            log.warning("control file %s unreadable: %s", self.path, e)
            return None

    def _begin(self, switch: Switch) -> None:
        self._end()
        if switch.until <= time.time():
            return
        self.now = switch
        until = time.strftime("%H:%M:%S", time.gmtime(switch.until))
        log.info("fault %s begins (until %s UTC)", switch.kind, until)
        if switch.release:
            log.info("release %s deployed", switch.release)
        if switch.child:
            self._start_child(switch)
        if switch.fds:
            self._exhaust()

    def stop(self) -> None:
        """End the fault now (the service is stopping)."""
        self._end()

    def _start_child(self, switch: Switch) -> None:
        try:
            # in the service's own process group and cgroups: counted as the service's
            self._child = subprocess.Popen(
                switch.child,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                process_group=0,  # its own group, all of it ended with the fault
            )
        except OSError as e:
            log.error("fault child %s failed to start: %s", switch.child[0], e)

    def _exhaust(self) -> None:
        """Open /dev/null until the open-files limit refuses (at most the limit)."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        bound = FD_LIMIT if soft == resource.RLIM_INFINITY else soft
        for _ in range(bound):
            try:
                self._held.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                break
        log.info("holding %d file descriptors", len(self._held))

    def _end(self) -> None:
        if self._child is not None:
            child, self._child = self._child, None
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGTERM)
            try:
                child.wait(_CHILD_TERM_S)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGKILL)  # what the group's leader left
        for fd in self._held:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._held = []
        if self.now.kind:
            log.info("fault %s ends", self.now.kind)
        self.now = Switch()
