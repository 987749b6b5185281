"""A fast failure has nothing slow on its way: a probe answered 503 in milliseconds, with
PostgreSQL healthy and idle and a proxy process on the path, is not "a slow network path to
the database" — the holdout faults of stop 45 (the service's database login revoked, the
database read-only for it, the service out of file descriptors) were all reported as that
path, possible by elimination. Blackbox exporter's and postgres_exporter's series turned
into TSDB blocks by promtool and served by a real Prometheus. The same fast 503 with an error
on every request in PostgreSQL's log (a trigger dividing by zero) is that error, quoted in
the primary cause; the same lines fallen silent a minute before are an earlier incident's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.alerts.mapping import Investigation
from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from logsources import FileLogSource
from tests.reasoning_core.answers.alert_analysis import MAPPING, analyse_alert, findings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

START = datetime(2026, 11, 28, 5, 0, tzinfo=UTC)
ONSET = START + timedelta(minutes=20)
AT = ONSET + timedelta(seconds=90)
TARGET = "http://127.0.0.1:8080/checkout"
PROBE = f'instance="{TARGET}",job="blackbox"'
WEB = 'instance="127.0.0.1:8080",job="web"'
PG = 'instance="127.0.0.1:9187",job="postgres"'
PROCESSES = 'instance="127.0.0.1:9256",job="process"'


def _times() -> Iterator[tuple[int, bool]]:
    at = START
    while at <= AT + timedelta(minutes=1):
        yield int(at.timestamp()), at >= ONSET
        at += timedelta(seconds=5)


def _gauge(name: str, labels: str, before: float, after: float) -> list[str]:
    return [f"# TYPE {name} gauge", *(f"{name}{{{labels}}} {after if late else before} {t}"
                                      for t, late in _times())]  # fmt: skip


def _recording(probe_seconds: float) -> str:
    lines = _gauge("probe_success", PROBE, 1, 0)
    lines += _gauge("probe_duration_seconds", PROBE, 0.02, probe_seconds)
    lines += _gauge("probe_http_status_code", PROBE, 200, 503)
    lines += ["# TYPE probe_http_duration_seconds gauge"]
    for phase in ("resolve", "connect", "processing", "transfer"):
        lines += [f'probe_http_duration_seconds{{{PROBE},phase="{phase}"}} '
                  f"{probe_seconds if late and phase == 'processing' else 0.002} {t}"
                  for t, late in _times()]  # fmt: skip
    lines += ["# TYPE up gauge"]
    for labels in (WEB, PROBE, PG, PROCESSES):
        lines += [f"up{{{labels}}} 1 {t}" for t, _ in _times()]
    lines += _gauge("scrape_duration_seconds", PG, 0.02, 0.02)
    lines += _gauge("pg_up", PG, 1, 1)
    lines += _gauge("pg_settings_max_connections", PG, 100, 100)
    lines += ["# TYPE pg_stat_activity_count gauge"]
    lines += [f'pg_stat_activity_count{{{PG},datname="shop",state="{state}"}} {n} {t}'
              for state, n in (("active", 1), ("idle", 4)) for t, _ in _times()]  # fmt: skip
    lines += _gauge("pg_locks_count", f'{PG},datname="shop",mode="exclusivelock"', 0, 0)
    lines += ["# TYPE namedprocess_namegroup_num_procs gauge"]
    for group in ("web", "db-proxy", "postgres"):
        lines += [f'namedprocess_namegroup_num_procs{{{PROCESSES},groupname="{group}"}} 1 {t}'
                  for t, _ in _times()]  # fmt: skip
    return "\n".join([*lines, "# EOF"]) + "\n"


def _probe_alert(tmp_path: Path, probe_seconds: float, alertname: str) -> Investigation:
    """The recording's TSDB blocks under `tmp_path`, and the probe alert's investigation."""
    source = tmp_path / "series.om"
    source.write_text(_recording(probe_seconds))
    build_tsdb(source, tmp_path / "tsdb")
    labels = {"alertname": alertname, "severity": "critical", "instance": TARGET,
              "job": "blackbox"}  # fmt: skip
    found = MAPPING.resolve(labels)
    assert isinstance(found, Investigation) and found.runbook == "endpoint_probe", found
    return found


@pytest.mark.parametrize("probe_seconds", [0.004, 3.0], ids=["fast-503", "slow-503"])
async def test_a_fast_failure_is_not_a_slow_path(
    pool: asyncpg.Pool[Any], tmp_path: Path, probe_seconds: float
) -> None:
    found = _probe_alert(tmp_path, probe_seconds, "BlackboxProbeHttpFailure")
    async with LocalPrometheus(tmp_path / "tsdb") as server:
        answer, tree = await analyse_alert(pool, server.url, found, AT)
    text = findings(answer, tree)
    synthesis = answer.synthesis
    assert synthesis is not None, text
    if probe_seconds < 0.5:  # 503 in 4 ms: the path is not slow, whatever else is ruled out
        assert synthesis.not_established and not synthesis.by_elimination, text
        assert synthesis.primary.confidence < 0.2, text  # vetoed, at most a faint candidate
        assert "possible cause" not in answer.text.split("\n\n")[0].lower(), text
    else:  # 503 after 3 s with PostgreSQL idle: the path stays possible, by elimination
        assert synthesis.primary.id == "slow_db_path" and synthesis.by_elimination, text


@pytest.mark.parametrize("still_written", [True, False], ids=["now", "fell-silent"])
async def test_an_error_on_every_request_is_quoted_as_the_cause_while_it_is_written(
    pool: asyncpg.Pool[Any], tmp_path: Path, still_written: bool
) -> None:
    found = _probe_alert(tmp_path, 0.004, "BlackboxProbeFailed")
    # one line a second from the onset on: up to the question, or stopped 60 s before it
    last = AT if still_written else AT - timedelta(seconds=60)
    count = int((last - ONSET).total_seconds())
    pg_log = tmp_path / "postgresql.log"
    pg_log.write_text("".join(
        f"{ONSET + timedelta(seconds=i):%Y-%m-%d %H:%M:%S}.120 UTC [4242] ERROR:  division by "
        'zero\n' f"{ONSET + timedelta(seconds=i):%Y-%m-%d %H:%M:%S}.120 UTC [4242] CONTEXT:  "
        'PL/pgSQL function stock_audit() line 3 at assignment\n'
        for i in range(count)
    ))  # fmt: skip
    logs = {"postgres": FileLogSource("postgres", [str(pg_log)])}
    async with LocalPrometheus(tmp_path / "tsdb") as server:
        answer, tree = await analyse_alert(pool, server.url, found, AT, logs=logs)
    text = findings(answer, tree)
    synthesis = answer.synthesis
    assert synthesis is not None, text
    if still_written:
        assert synthesis.primary.id.startswith("request_error"), text
        assert "division by zero" in synthesis.primary.title, text
        assert synthesis.confidence >= 0.5, text
    else:
        assert "division by zero" not in synthesis.primary.title, text
        assert synthesis.not_established and synthesis.confidence < 0.5, text
        assert "none since" in text, text  # the line is said as over


async def test_the_databases_own_line_is_the_deeper_link_when_both_logs_state_it(
    pool: asyncpg.Pool[Any], tmp_path: Path
) -> None:
    """The service relays PostgreSQL's error in its own log: both lines state the
    mechanism; the chain ends at PostgreSQL's, the part that refused the statement."""
    found = _probe_alert(tmp_path, 0.004, "BlackboxProbeFailed")
    count = int((AT - ONSET).total_seconds())
    at = [ONSET + timedelta(seconds=i) for i in range(count)]
    pg_log, web_log = tmp_path / "postgresql.log", tmp_path / "web.log"
    pg_log.write_text("".join(
        f'{t:%Y-%m-%d %H:%M:%S}.120 UTC [4242] ERROR:  new row for relation "stock" violates '
        'check constraint "stock_sold_cap"\n' for t in at
    ))  # fmt: skip
    web_log.write_text("".join(
        f"{t:%Y-%m-%d %H:%M:%S},300 ERROR shop: database query failed: CheckViolationError: "
        'new row for relation "stock" violates check constraint "stock_sold_cap"\n' for t in at
    ))  # fmt: skip
    web = FileLogSource("web", [str(web_log)])
    logs = {"postgres": FileLogSource("postgres", [str(pg_log)]), "web": web,
            "127.0.0.1:8080": web}  # fmt: skip
    async with LocalPrometheus(tmp_path / "tsdb") as server:
        answer, tree = await analyse_alert(pool, server.url, found, AT, logs=logs)
    text = findings(answer, tree)
    synthesis = answer.synthesis
    assert synthesis is not None, text
    assert synthesis.primary.id.endswith("error_mechanism_pg"), text
    assert "violates check constraint" in synthesis.primary.title, text
