"""Issue 37: restarts seen under a supervisor. The real process-exporter, with the lab's
groups, over the lab's real supervisor (lab.keepalive) and service (lab.service): the
supervisor is a group of its own, so a killed and restarted service changes the web
group's oldest start time, and the crash-loop rule counts only live start times."""

from __future__ import annotations

import os
import re
import sys
import time
import urllib.request
from pathlib import Path

from lab import config
from lab.lab import free_port
from lab.processes import kill_group, start

EXPORTER = "/usr/bin/prometheus-process-exporter"


def groups(port: int) -> dict[tuple[str, str], float]:
    """(metric, groupname) -> value of the exporter's namegroup series now."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    found = {}
    for m in re.finditer(
        r'^namedprocess_namegroup_(num_procs|oldest_start_time_seconds)\{groupname="([^"]+)"\} '
        r"(\S+)$",
        text,
        re.MULTILINE,
    ):
        found[(m.group(1), m.group(2))] = float(m.group(3))
    return found


def _until(what: str, probe: object, timeout_s: float = 20.0) -> object:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            got = probe()  # type: ignore[operator]
        except OSError:
            got = None
        if got:
            return got
        time.sleep(0.3)
    raise AssertionError(f"no {what} within {timeout_s} s")


def test_a_restarted_service_changes_its_group_not_its_supervisors(tmp_path: Path) -> None:
    assert os.path.exists(EXPORTER), "the lab's process-exporter is installed"
    logs, port, web_port = tmp_path / "logs", free_port(), free_port()
    # The lab's groups as they are, each narrowed to this test's processes (process-exporter
    # wants every `cmdline` regex of a group to match): another lab on the machine is not
    # counted.
    mine = re.escape(str(tmp_path))
    narrowed = {
        "process_names": [
            {**g, "cmdline": [*g["cmdline"], mine]} if "cmdline" in g else g
            for g in config.PROCESS_GROUPS["process_names"]
        ]
    }
    conf = config.write(tmp_path / "process-exporter.yml", narrowed)
    pid_file = tmp_path / "web.pid"
    exporter = start(
        "process-exporter",
        [EXPORTER, "-config.path", str(conf), "-web.listen-address", f"127.0.0.1:{port}"],
        logs=logs,
    )
    supervisor = start(
        "web",
        [sys.executable, "-m", "lab.keepalive", "--pid-file", str(pid_file),
         "--hold-file", str(tmp_path / "web.hold"), "--pause-s", "0.5", "--",
         sys.executable, "-m", "lab.service", "--port", str(web_port),
         "--dsn", "postgresql://nobody@127.0.0.1:9/none",
         "--release-file", str(tmp_path / "web.release")],
        logs=logs, cwd=Path.cwd(),
    )  # fmt: skip
    try:
        first = _until(
            "both groups",
            lambda: (
                (g := groups(port)).get(("num_procs", "web"))
                and g.get(("num_procs", "web-supervisor"))
                and g
            ),
        )
        assert isinstance(first, dict)
        assert first[("num_procs", "web-supervisor")] >= 1
        pid = int(str(_until("the service's pid", lambda: pid_file.read_text().strip())))
        time.sleep(1.1)  # start times have a resolution of seconds
        os.kill(pid, 9)
        _until("a new service", lambda: pid_file.read_text().strip() not in ("", str(pid)))

        def restarted() -> dict[tuple[str, str], float] | None:
            now = groups(port)
            web = now.get(("oldest_start_time_seconds", "web"), 0.0)
            return now if web > first[("oldest_start_time_seconds", "web")] else None

        after = _until("the web group's new start time", restarted)
        assert isinstance(after, dict)
        # The supervisor did not restart: its group's oldest process is the same.
        assert (
            after[("oldest_start_time_seconds", "web-supervisor")]
            == (first[("oldest_start_time_seconds", "web-supervisor")])
        )
    finally:
        kill_group(supervisor.pid)
        kill_group(exporter.pid)


def test_the_crash_loop_rule_counts_live_start_times() -> None:
    rules = {r["alert"]: r for g in config.RULES["groups"] for r in g["rules"]}
    loop = rules["ProcessCrashLooping"]
    assert "> 0)[2m:1s]" in loop["expr"] and loop["expr"].endswith("> 2")
    assert "times in 2 min" in loop["annotations"]["summary"]
    web = next(g for g in config.PROCESS_GROUPS["process_names"] if g["name"] == "web")
    supervisor_first = [g["name"] for g in config.PROCESS_GROUPS["process_names"]][:2]
    assert supervisor_first == ["web-supervisor", "web"]
    keepalive = "python -m lab.keepalive --pid-file x -- python -m lab.service --port 1"
    assert re.search(web["cmdline"][0], keepalive), "why the supervisor's group comes first"
