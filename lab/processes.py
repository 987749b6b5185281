"""Processes of the lab: each started in its own session (so its whole process group can be
killed), recorded with its pid in the state file, checked and stopped by group."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

#: The processes this `whytree` started, kept until reaped (a detached child dropped while
#: running is a ResourceWarning; its exit must still be collected).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def keep(child: subprocess.Popen[bytes]) -> None:
    """Hold a started child so that it is reaped later (by `kill_group` or at exit)."""
    _CHILDREN[child.pid] = child


@dataclass
class Proc:
    """One started process: its name, pid (= its process group), command and log."""

    name: str
    pid: int
    argv: list[str]
    log: str


def alive(pid: int) -> bool:
    """Is this pid a running (not zombie) process?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def group_alive(pgid: int) -> bool:
    """Is any process of this process group still running?"""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def start(
    name: str,
    argv: list[str],
    *,
    logs: Path,
    env: dict[str, str] | None = None,
    user: str | None = None,
    cwd: Path | None = None,
) -> Proc:
    """Start `argv` in a new session (its pid is its process group), output to logs/NAME.log."""
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{name}.log"
    with log.open("ab") as out:
        child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
            user=user,
            cwd=cwd,
        )
    keep(child)
    return Proc(name=name, pid=child.pid, argv=argv, log=str(log))


def kill_group(pgid: int, *, grace_s: float = 5.0) -> None:
    """SIGTERM the process group, then SIGKILL what is left after `grace_s`."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        _reap(pgid)
        if not group_alive(pgid):
            return
        time.sleep(0.1)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return
    for _ in range(50):
        _reap(pgid)
        if not group_alive(pgid):
            return
        time.sleep(0.1)


def _reap(pid: int) -> None:
    """Collect our own dead child (a zombie keeps the group 'alive' in /proc)."""
    child = _CHILDREN.get(pid)
    if child is not None:
        if child.poll() is not None:
            del _CHILDREN[pid]
        return
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


class State:
    """The lab's state file: ports, paths, started processes, the fault running now."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.path.read_text())
        return data

    def write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2))
        tmp.replace(self.path)

    def add_proc(self, proc: Proc) -> None:
        data = self.read()
        data.setdefault("processes", []).append(asdict(proc))
        self.write(data)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
