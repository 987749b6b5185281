"""Issue 37: a crash loop under a supervisor is seen. The lab's real web service under its
real supervisor (lab.keepalive, which the process exporter counts in the same group, so the
group's oldest start time never changes), scraped every second by a real Prometheus with the
lab's alert rules: killed three times, the service's own process_start_time_seconds changes
each time, ServiceCrashLooping fires, and the process_group runbook's restart check reads
"3 restarts in 2 min" where the group's oldest start time reads none."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from lab import config
from lab.lab import free_port
from lab.processes import kill_group, start
from logsources import FileLogSource
from reasoning_core.logs import LogTool
from reasoning_core.planners.runbook.checks import PlanState, build_request, judge
from reasoning_core.runbooks.loader import load_runbooks
from reasoning_core.runbooks.timewindow import TimeWindow
from reasoning_core.tools.prometheus import PrometheusTool

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("prometheus") is None, reason="Debian's prometheus"),
]


def _json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return yaml.safe_load(response.read())


def _until(what: str, probe: Any, timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            got = probe()
        except OSError:
            got = None
        if got:
            return got
        time.sleep(0.5)
    raise AssertionError(f"no {what} within {timeout_s} s")


async def test_a_crash_loop_under_its_supervisor_alerts_and_reads_as_restarts(
    tmp_path: Path,
) -> None:
    web, prom = free_port(), free_port()
    logs = tmp_path / "logs"
    rules = config.write(tmp_path / "rules.yml", config.RULES)
    scrape = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
        "rule_files": [str(rules)],
        "scrape_configs": [
            {"job_name": "web", "static_configs": [{"targets": [f"127.0.0.1:{web}"]}]}
        ],
    }
    prom_config = config.write(tmp_path / "prometheus.yml", scrape)
    procs = [
        start(
            "web",
            [sys.executable, "-m", "lab.keepalive", "--pid-file", str(tmp_path / "web.pid"),
             "--hold-file", str(tmp_path / "web.hold"), "--pause-s", "1.5", "--",
             sys.executable, "-m", "lab.service", "--port", str(web),
             "--dsn", "postgresql://shop@127.0.0.1:9/none",
             "--release-file", str(tmp_path / "web.release")],
            logs=logs, cwd=Path.cwd(),
        ),
        start(
            "prometheus",
            ["prometheus", f"--config.file={prom_config}",
             f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{prom}"],
            logs=logs,
        ),
    ]  # fmt: skip
    api = f"http://127.0.0.1:{prom}/api/v1"
    try:

        def up() -> bool:
            found = _json(f"{api}/query?query=" + urllib.parse.quote('up{job="web"}'))
            return any(r["value"][1] == "1" for r in found["data"]["result"])

        _until("the web service scraped", up, 60)
        for _ in range(3):
            pid = int(_until("the pid", lambda: (tmp_path / "web.pid").read_text().strip(), 30))
            await asyncio.sleep(2.5)  # scraped with this pid's start time (seconds resolution)
            os.kill(pid, 9)
            _until("a new service", lambda pid=pid: (tmp_path / "web.pid").read_text().strip()
                   not in ("", str(pid)), 30)  # fmt: skip
        await asyncio.sleep(3)
        _until("the service up again", up, 30)

        def firing() -> bool:
            alerts = _json(f"{api}/alerts")["data"]["alerts"]
            return any(a["labels"]["alertname"] == "ServiceCrashLooping" for a in alerts)

        _until("ServiceCrashLooping", firing, 30)
        # the process_group runbook's restart check, as the runbook planner builds and judges it
        runbook = load_runbooks().get("process_group")
        assert runbook is not None
        now = datetime.now(UTC)
        state = PlanState(
            runbook="process_group", language="en", params={"groupname": "web"}, anchor=now,
            # the runbook's own window: the last 15 min, its end an hour past the clock
            window=TimeWindow(recent_start=now - timedelta(minutes=15),
                              recent_end=now + timedelta(hours=1),
                              baseline_start=now - timedelta(minutes=75),
                              baseline_end=now - timedelta(minutes=15), source="default"),
        )  # fmt: skip
        check = runbook.check("service_restarted")
        result = await PrometheusTool(f"http://127.0.0.1:{prom}").run(
            build_request(check, runbook, state)
        )
        evidence = judge(check, state, result)
        assert evidence.confirmed is True, evidence.text
        assert "restarts of the service in 2 min max 3" in evidence.text, evidence.text
        # and the supervisor's own word on each exit, read by the runbook's log check
        exits = runbook.check("group_exit_log")
        tool = LogTool({"web": FileLogSource("web", [str(logs / "web.log")])})
        found = await tool.run(build_request(exits, runbook, state))
        said = judge(exits, state, found)
        assert said.confirmed is True, said.text
        assert said.text.startswith("“WARNING keepalive: lab.service exited with -9; starting it")
        assert said.data["log_count"] == 3
    finally:
        for proc in procs:
            kill_group(proc.pid)
    supervisor = (logs / "web.log").read_text()
    assert supervisor.count("lab.service exited with -9; starting it again") == 3
