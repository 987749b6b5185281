"""Faults declared as data: one YAML file per fault (docs/lab.md). `inject` runs its start
command in a session of its own (bounded by `timeout`), recorded in the lab's state;
`clear` runs its stop command, then kills whatever of the fault is left. A system-lab fault
names a `kind` and a `target` service instead of its commands (lab/system/kinds.py; a grid
file, kinds × targets, is many faults); its target must run in the lab it is injected into."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lab.lab import Lab, LabError
from lab.processes import group_alive, keep, kill_group
from lab.system.kinds import KindError, expand, fault_fields

FAULTS_DIR = Path(__file__).parent / "faults"
_STOP_TIMEOUT_S = 30


@dataclass(frozen=True)
class Fault:
    """One fault file: what it breaks, what whytree should name, how to start and stop it."""

    name: str
    breaks: str
    cause: str | None  # None: a nothing-wrong window
    cause_terms: tuple[str, ...]
    component: str | None
    start: str
    stop: str
    show_s: float
    duration_s: float
    path: Path
    #: Does the lab's software write a line about this fault (an error, a kill, a refusal)?
    #: `reports_quoting_logs_where_logged` counts only these.
    logged: bool = False
    #: A system-lab fault's kind and target service (lab/system/kinds.py), else None.
    kind: str | None = None
    target: str | None = None

    @property
    def nothing_wrong(self) -> bool:
        return self.cause is None


class FaultFileError(ValueError):
    """A fault file that does not follow the format; the message names the file and field."""


def load_fault(path: Path) -> Fault:
    """The one fault of a file (the first of a grid file)."""
    return load_fault_file(path)[0]


def load_fault_file(path: Path) -> list[Fault]:
    """The faults of a file: one, or every kind × target of a system grid file."""
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise FaultFileError(f"{path}: cannot read: {e}") from e
    if not isinstance(raw, dict):
        raise FaultFileError(f"{path}: a fault file is a mapping")
    if "kind" in raw or "grid" in raw:
        try:
            return [Fault(**fault_fields(one), path=path) for one in expand(raw)]
        except (KindError, TypeError, ValueError) as e:
            raise FaultFileError(f"{path}: {e}") from e
    return [_command_fault(path, raw)]


def _command_fault(path: Path, raw: dict[str, Any]) -> Fault:
    expected: Any = raw.get("expected") or {}
    try:
        cause = expected.get("cause")
        terms = expected.get("cause_terms") or ([cause] if cause else [])
        return Fault(
            name=str(raw["name"]),
            breaks=str(raw["breaks"]),
            cause=str(cause) if cause else None,
            cause_terms=tuple(str(t).lower() for t in terms),
            component=str(expected["component"]) if expected.get("component") else None,
            start=str(raw["start"]),
            stop=str(raw.get("stop") or "true"),
            show_s=float(raw.get("show_s", 60)),
            duration_s=min(float(raw.get("duration_s", 120)), 900.0),
            path=path,
            logged=bool(expected.get("logged", False)),
        )
    except KeyError as e:
        raise FaultFileError(f"{path}: missing field {e.args[0]}") from e
    except (TypeError, ValueError, AttributeError) as e:
        raise FaultFileError(f"{path}: {e}") from e


def load_faults(folder: Path = FAULTS_DIR) -> list[Fault]:
    return [f for p in sorted(folder.glob("*.yaml")) for f in load_fault_file(p)]


def find_fault(name: str, folder: Path = FAULTS_DIR) -> Fault:
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.exists():
        return load_fault(path)
    for fault in load_faults(folder):
        if fault.name == name:
            return fault
    known = ", ".join(f.name for f in load_faults(folder))
    raise LabError(f"no fault named {name!r} (known: {known})")


def inject(lab: Lab, fault: Fault) -> int:
    """Start the fault (one at a time); returns its process group."""
    data = lab.read()
    if data.get("fault"):
        raise LabError(f"fault {data['fault']['name']} is running; `whytree lab clear` first")
    check_target(fault, data)
    env = {**os.environ, **lab.fault_env()}
    log = (lab.logs / f"fault-{fault.name}.log").open("ab")
    with log:
        child = subprocess.Popen(
            [
                "timeout",
                "--kill-after=5",
                str(int(fault.duration_s) + 30),
                "bash",
                "-c",
                fault.start,
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    keep(child)
    data["fault"] = {"name": fault.name, "pid": child.pid, "stop": fault.stop}
    lab.state.write(data)
    return child.pid


def check_target(fault: Fault, data: dict[str, Any]) -> None:
    """A system fault's target must be a service running in this lab (LabError otherwise)."""
    if fault.target is None:
        return
    if not data.get("system"):
        raise LabError(
            f"fault {fault.name} targets {fault.target}, a service of the system lab; "
            "this lab is the three-part shop (`whytree lab up --system`)"
        )
    running = [p["name"] for p in data.get("processes", [])]
    if fault.target not in running:
        services = ", ".join(data.get("services", [])) or "none"
        raise LabError(
            f"fault {fault.name} targets {fault.target}, which is not in this lab "
            f"(its services: {services})"
        )


def clear(lab: Lab) -> str | None:
    """Run the running fault's stop command, then kill what is left of it. Returns a note
    when the stop command failed (the fault is cleared all the same)."""
    data = lab.read()
    fault = data.get("fault")
    if not fault:
        return None
    note = None
    env = {**os.environ, **lab.fault_env()}
    try:
        done = subprocess.run(
            ["bash", "-c", fault["stop"]],
            env=env,
            capture_output=True,
            timeout=_STOP_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            note = f"the stop command of {fault['name']} failed ({done.returncode}); killed it"
    except subprocess.TimeoutExpired:
        note = f"the stop command of {fault['name']} took over {_STOP_TIMEOUT_S} s; killed it"
    if group_alive(fault["pid"]):
        kill_group(fault["pid"])
    data = lab.read()
    data["fault"] = None
    lab.state.write(data)
    return note
