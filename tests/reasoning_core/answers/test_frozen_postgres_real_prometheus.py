"""Issue 37's first fault on what the live lab's real exporters published: PostgreSQL
frozen (postmaster and backends stopped, the processes alive, nothing answering).

tests/data/lab/pg-frozen.om.gz was recorded with `scripts/record_lab_series.py` (the lab
healthy for 3 min, then lab/faults/holdout2/pg-frozen.yaml). postgres_exporter's scrape
times out from the freeze on, so its series stop. Before issue 37 the endpoint runbook
read their last samples as "PostgreSQL itself idle" and blamed the network path at 🟡
0.67. Now that reading is inconclusive and says why, and PostgreSQL is named as not
responding.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.alerts.mapping import Investigation
from demo.services import LocalPrometheus, unavailable_reason
from reasoning_core.planners.runbook.words import detail_of
from reasoning_core.tools.base import ToolRequest
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.understanding.catalogue import EntityCatalogue, KnownNames
from tests.reasoning_core.answers.alert_analysis import MAPPING, RUNBOOKS, analyse_alert, findings
from tests.recordings import recorded_tsdb

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

DATA = Path(__file__).parents[2] / "data" / "lab"
ALERT_AFTER = timedelta(seconds=75)


@dataclass(frozen=True)
class Recording:
    url: str
    known: KnownNames
    frozen: datetime
    names: dict[str, str]


@pytest.fixture(scope="module")
async def recording() -> AsyncIterator[Recording]:
    events = json.loads((DATA / "pg-frozen.events.json").read_text())
    with recorded_tsdb(DATA / "pg-frozen.om.gz", prefix="whytree-frozen-") as tsdb:
        async with LocalPrometheus(tsdb) as prom:
            tool = PrometheusTool(prom.url)
            catalogue = EntityCatalogue(sources=RUNBOOKS.name_sources, tools={"prometheus": tool})
            end = datetime.fromtimestamp(events["end"], UTC)
            names = {
                "target": await _label(tool, "probe_success", "instance", end),
                "job": await _label(tool, "http_requests_total", "job", end),
            }
            start = datetime.fromtimestamp(events["faults"][0]["start"], UTC)
            yield Recording(prom.url, await catalogue.snapshot(), start, names)


async def _label(tool: PrometheusTool, metric: str, label: str, at: datetime) -> str:
    result = await tool.run(ToolRequest(query=f"group by ({label}) ({metric})", time=at))
    assert result.ok and result.rows, (metric, result.error)
    return str(result.rows[0]["metric"][label])


ALERTS = {
    "BlackboxProbeFailed": ("endpoint_probe", "database", "target"),
    "HttpHighLatency": ("http_service_trouble", "db_connections", "job"),
}


@pytest.mark.parametrize("name", sorted(ALERTS))
async def test_a_frozen_postgres_is_not_responding_not_a_slow_path(
    pool: asyncpg.Pool[Any], recording: Recording, name: str
) -> None:
    runbook, expected, subject = ALERTS[name]
    labels = {"alertname": name, "severity": "warning"}
    if subject == "target":
        labels |= {"instance": recording.names["target"], "job": "blackbox"}
    else:
        labels |= {"job": recording.names["job"], "route": "/checkout"}
    found = MAPPING.resolve(labels)
    assert isinstance(found, Investigation) and found.runbook == runbook
    answer, tree = await analyse_alert(
        pool, recording.url, found, recording.frozen + ALERT_AFTER, known=recording.known
    )
    synthesis = answer.synthesis
    assert synthesis is not None and tree is not None, findings(answer, tree)
    assert synthesis.primary.id == expected, findings(answer, tree)
    assert detail_of(tree, synthesis.primary.node_id) == "hung", findings(answer, tree)
    assert "not responding (hung)" in answer.text, answer.text
    # The stopped series are said as such, never as "PostgreSQL itself idle".
    assert "no sample from postgres" in answer.text, findings(answer, tree)
    slow = next((r for r in synthesis.ranking if r.id == "slow_db_path"), None)
    assert slow is None or slow.confidence < 0.5, findings(answer, tree)
