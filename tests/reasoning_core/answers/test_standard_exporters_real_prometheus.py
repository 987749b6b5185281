"""The endpoint, PostgreSQL and HTTP runbooks against a real Prometheus over what the live
lab's real exporters published while real faults ran.

tests/data/lab/standard-exporters.om.gz was recorded once with
`scripts/record_lab_series.py` (the lab up, healthy for 3 min, then pg-lock,
pg-connections, slow-db, bad-release and web-killed one after another, 2 min apart);
the events file says when each fault started and was cleared. One session turns it into
TSDB blocks with promtool and starts `prometheus` over them. Each case is an alert the
lab's rules fired during a fault, with the labels Alertmanager posted: the bundled alert
mapping turns it into a question and parameters, and the analysis (DeepAnalyst, runbook
planner, no LLM, trees in PostgreSQL) runs with its clock at the alert's time. It must
end in the fault's cause — and, in a healthy window, in no cause.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.alerts.mapping import Investigation
from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from reasoning_core.models import Answer, Language, Tree
from reasoning_core.planners.runbook.words import detail_of
from reasoning_core.tools.base import ToolRequest
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.tree.aggregation import ELIMINATION_MAX
from reasoning_core.understanding.catalogue import EntityCatalogue, KnownNames
from tests.reasoning_core.answers.alert_analysis import MAPPING, RUNBOOKS, analyse_alert, findings
from tests.recordings import recorded_tsdb

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

DATA = Path(__file__).parents[2] / "data" / "lab"
#: When the alert is posted, after the fault started (the lab's rules fire within a minute).
ALERT_AFTER = timedelta(seconds=75)


@dataclass(frozen=True)
class Lab:
    """The served recording: its Prometheus, the faults' times, the names its series carry."""

    url: str
    known: KnownNames
    healthy_end: datetime
    faults: dict[str, tuple[datetime, datetime]]
    names: dict[str, str]  # target, pg, job: the lab's label values, read from the data


def _at(stamp: float) -> datetime:
    return datetime.fromtimestamp(stamp, tz=UTC)


@pytest.fixture(scope="session")
async def lab() -> AsyncIterator[Lab]:
    events = json.loads((DATA / "standard-exporters.events.json").read_text())
    with recorded_tsdb(DATA / "standard-exporters.om.gz", prefix="whytree-lab-tsdb-") as tsdb:
        async with LocalPrometheus(tsdb) as prom:
            tool = PrometheusTool(prom.url)
            catalogue = EntityCatalogue(sources=RUNBOOKS.name_sources, tools={"prometheus": tool})
            known = await catalogue.snapshot()
            end = _at(events["end"])
            names = {
                "target": await _label(tool, "probe_success", "instance", end),
                "pg": await _label(tool, "pg_up", "instance", end),
                "job": await _label(tool, "http_requests_total", "job", end),
            }
            yield Lab(
                url=prom.url,
                known=known,
                healthy_end=_at(events["healthy_end"]),
                faults={f["name"]: (_at(f["start"]), _at(f["end"])) for f in events["faults"]},
                names=names,
            )


async def _label(tool: PrometheusTool, metric: str, label: str, at: datetime) -> str:
    result = await tool.run(ToolRequest(query=f"group by ({label}) ({metric})", time=at))
    assert result.ok and result.rows, (metric, result.error)
    return str(result.rows[0]["metric"][label])


def alert(lab: Lab, name: str) -> dict[str, str]:
    """The labels the lab's rule for `name` puts on its alert (lab/config.py RULES)."""
    n = lab.names
    labels = {
        "BlackboxProbeFailed": {"instance": n["target"], "job": "blackbox"},
        "BlackboxSlowProbe": {"instance": n["target"], "job": "blackbox"},
        "BlackboxProbeHttpFailure": {"instance": n["target"], "job": "blackbox"},
        "PostgresqlDown": {"instance": n["pg"], "job": "postgres"},
        "PostgresqlTooManyConnections": {"instance": n["pg"], "job": "postgres"},
        "PostgresqlLongRunningTransaction": {"instance": n["pg"], "datname": "postgres"},
        "HttpHighErrorRate": {"job": n["job"], "route": "/checkout"},
        "HttpHighLatency": {"job": n["job"], "route": "/checkout"},
        "TargetDown": {"job": n["job"]},
    }[name]
    return {"alertname": name, "severity": "warning", **labels}


async def investigate(
    pool: asyncpg.Pool[Any], lab: Lab, labels: dict[str, str], at: datetime,
    language: Language = "en",
) -> tuple[Investigation, Answer, Tree | None]:  # fmt: skip
    """What the alert worker does: the mapping's question and parameters, one analysis."""
    found = MAPPING.resolve(labels)
    assert isinstance(found, Investigation), found
    answer, tree = await analyse_alert(
        pool, lab.url, found, at, language=language, known=lab.known
    )
    return found, answer, tree


#: (fault, alert, runbook, primary hypothesis, its alternative that held, words the report
#: must carry: the cause and the component, as the fault file's `expected` says them)
CASES = [
    ("pg-lock", "HttpHighErrorRate", "http_service_trouble", "db_lock_waits", None,
     ["lock", "postgres"]),
    ("pg-lock", "BlackboxProbeFailed", "endpoint_probe", "database", "locks",
     ["lock", "postgres"]),
    ("pg-lock", "PostgresqlLongRunningTransaction", "postgres_trouble", "lock_contention", None,
     ["lock", "transaction"]),
    # the slots ran out because one client holds them idle: the chain's deepest link
    ("pg-connections", "PostgresqlTooManyConnections", "postgres_trouble",
     "connections_exhausted>slots_by_idle_clients", None, ["connection", "postgres"]),
    # whichever alert came first, the same deepest link (checksets/postgres_slots.yaml)
    ("pg-connections", "HttpHighErrorRate", "http_service_trouble",
     "db_connections.connections>slots_by_idle_clients", None, ["connection", "postgres"]),
    ("pg-connections", "BlackboxProbeHttpFailure", "endpoint_probe",
     "database.connections>slots_by_idle_clients", None, ["connection", "postgres"]),
    ("slow-db", "HttpHighLatency", "http_service_trouble", "slow_db_path", None,
     ["slow", "db-proxy"]),
    ("slow-db", "BlackboxProbeFailed", "endpoint_probe", "slow_db_path", None,
     ["slow", "db-proxy"]),
    ("bad-release", "HttpHighErrorRate", "http_service_trouble", "bad_release", None,
     ["release", "/checkout"]),
    ("bad-release", "BlackboxProbeHttpFailure", "endpoint_probe", "bad_release", None,
     ["release", "version"]),
    ("web-killed", "TargetDown", "target_down", "process_down", None, ["down", "web"]),
    ("web-killed", "BlackboxProbeFailed", "endpoint_probe", "service_down", None,
     ["down", "web"]),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
async def test_each_alert_ends_in_the_faults_cause(
    pool: asyncpg.Pool[Any], lab: Lab, case: tuple[str, str, str, str, str | None, list[str]]
) -> None:
    fault, name, runbook, expected, detail, words = case
    start, _ = lab.faults[fault]
    found, answer, tree = await investigate(pool, lab, alert(lab, name), start + ALERT_AFTER)
    assert found.runbook == runbook
    assert answer.synthesis is not None, findings(answer, tree)
    assert answer.synthesis.primary.id == expected, findings(answer, tree)
    if detail is not None:
        assert tree is not None
        assert detail_of(tree, answer.synthesis.primary.node_id) == detail, findings(answer, tree)
    if expected == "slow_db_path":
        # Issue 37: nothing the standard exporters give measures the path (PostgreSQL idle,
        # a proxy process there): possible, the others ruled out, below "established"; the
        # part named is the proxy's process group, never PostgreSQL's instance.
        assert answer.synthesis.by_elimination, findings(answer, tree)
        assert answer.confidence <= ELIMINATION_MAX, findings(answer, tree)
        assert "possible cause (the others were ruled out)" in answer.text.lower()
        assert "groupname db-proxy" in answer.synthesis.primary.title
        assert "127.0.0.1" not in answer.synthesis.primary.title
    else:
        assert answer.confidence >= 0.6, findings(answer, tree)
    for word in words:
        assert word in answer.text.lower(), answer.text


@pytest.mark.parametrize(
    "name",
    ["HttpHighErrorRate", "BlackboxProbeFailed", "PostgresqlTooManyConnections", "TargetDown"],
)
async def test_a_healthy_window_names_no_cause(
    pool: asyncpg.Pool[Any], lab: Lab, name: str
) -> None:
    at = lab.healthy_end - timedelta(seconds=30)
    _, answer, tree = await investigate(pool, lab, alert(lab, name), at)
    assert answer.synthesis is not None, findings(answer, tree)
    assert answer.synthesis.primary.id == "none", findings(answer, tree)


async def test_the_report_is_worded_in_russian_with_the_same_cause(
    pool: asyncpg.Pool[Any], lab: Lab
) -> None:
    start, _ = lab.faults["pg-lock"]
    _, answer, tree = await investigate(
        pool, lab, alert(lab, "HttpHighErrorRate"), start + ALERT_AFTER, "ru"
    )
    assert answer.synthesis is not None, findings(answer, tree)
    assert answer.synthesis.primary.id == "db_lock_waits", findings(answer, tree)
    assert answer.language == "ru"
    assert "блокиров" in answer.text.lower(), answer.text


# --- certificates: the lab probes plain HTTP, so these series are written as
# blackbox_exporter publishes them for an https target (probe_ssl_earliest_cert_expiry:
# the Unix time the earliest certificate of the served chain expires).

CERT_NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
EXPIRING = "https://shop.example.com/health"
FRESH = "https://api.example.com/health"


@pytest.fixture(scope="session")
async def certificates() -> AsyncIterator[str]:
    scratch = Path(tempfile.mkdtemp(prefix="whytree-cert-tsdb-"))
    try:
        lines = []
        for target, days in ((EXPIRING, 5), (FRESH, 80)):
            expiry = (CERT_NOW + timedelta(days=days)).timestamp()
            head = f'probe_ssl_earliest_cert_expiry{{instance="{target}",job="blackbox"}}'
            for i in range(40):
                at = (CERT_NOW - timedelta(seconds=15 * (39 - i))).timestamp()
                lines.append(f"{head} {expiry:.0f} {at:.0f}")
        text = scratch / "series.om"
        text.write_text("\n".join(lines) + "\n# EOF\n", encoding="utf-8")
        build_tsdb(text, scratch / "tsdb")
        async with LocalPrometheus(scratch / "tsdb") as prom:
            yield prom.url
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.mark.parametrize(("target", "expected"), [(EXPIRING, "not_renewed"), (FRESH, "none")])
async def test_a_certificate_expiring_soon_is_named_with_its_days_left(
    pool: asyncpg.Pool[Any], certificates: str, target: str, expected: str
) -> None:
    tool = PrometheusTool(certificates)
    known = await EntityCatalogue(
        sources=RUNBOOKS.name_sources, tools={"prometheus": tool}
    ).snapshot()
    lab = Lab(url=certificates, known=known, healthy_end=CERT_NOW, faults={}, names={})
    labels = {"alertname": "BlackboxSslCertificateWillExpireSoon", "instance": target}
    found, answer, tree = await investigate(pool, lab, labels, CERT_NOW)
    assert found.runbook == "endpoint_certificate"
    assert answer.synthesis is not None, findings(answer, tree)
    assert answer.synthesis.primary.id == expected, findings(answer, tree)
    if expected != "none":
        assert "days until the certificate expires min 5.0 d" in findings(answer, tree)
