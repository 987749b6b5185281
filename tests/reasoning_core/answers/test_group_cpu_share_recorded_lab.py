"""The CPU runbook's process-group share over the lab's recording (tests/data/lab/lab-all.om.gz)
on a real Prometheus: the recording's host has 2 CPUs whose kernel counters (node_exporter's
`node_cpu_seconds_total`) advanced far slower than the processes' own (process-exporter's),
so a group's CPU divided by the host's busy cores read 662 %. A share is the group's cores
divided by the host's CPUs, never above 100 %, and a group using a few hundredths of a core
is not the one taking the CPU."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.alerts.mapping import Investigation
from demo.services import LocalPrometheus, unavailable_reason
from tests.reasoning_core.answers.alert_analysis import analyse_alert, findings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

#: node_exporter's instance in the recording.
NODE = "127.0.0.1:57427"
_PERCENT = re.compile(r"(\d+(?:\.\d+)?) ?%")


async def test_a_groups_share_of_the_hosts_cpu_is_bounded_by_its_cores(
    lab_recording: tuple[Path, dict[str, datetime]], pool: asyncpg.Pool[Any]
) -> None:
    tsdb, starts = lab_recording
    found = Investigation(
        runbook="host_cpu",
        parameters={"instance": NODE},
        questions={"en": f"why is the CPU of host {NODE} busy?"},
    )
    async with LocalPrometheus(tsdb) as prometheus:
        at = starts["nothing-wrong"] + timedelta(seconds=75)
        answer, tree = await analyse_alert(pool, prometheus.url, found, at)
    assert tree is not None, answer.text
    share = next(
        (n for n in tree.nodes.values() if n.context.get("key") == "group_cpu_share"), None
    )
    assert share is not None and share.result is not None, findings(answer, tree)
    percents = [float(p) for p in _PERCENT.findall(share.result.text)]
    assert percents and all(p <= 100 for p in percents), share.result.text
    assert share.result.confirmed is False, findings(answer, tree)
    assert answer.synthesis is not None
    assert answer.synthesis.primary.id != "process_group", findings(answer, tree)
