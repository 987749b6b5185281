"""A long transaction that burns the CPU is a runaway query, one that sits idle is a forgotten
transaction: PostgresqlLongRunningTransaction analysed by postgres_trouble over series in
postgres_exporter's and process-exporter's names (turned into TSDB blocks by promtool,
served by a real Prometheus) — the lab's holdout fault `pg-cpu-burn` in miniature."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.alerts.mapping import Investigation
from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from tests.reasoning_core.answers.alert_analysis import MAPPING, analyse_alert, findings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

START = datetime(2026, 11, 27, 3, 0, tzinfo=UTC)
#: The long statement begins here; the alert is analysed 90 s later.
ONSET = START + timedelta(minutes=20)
AT = ONSET + timedelta(seconds=90)
STEP = 5
PG = 'instance="127.0.0.1:9187",job="postgres"'
PROCESSES = 'instance="127.0.0.1:9256",job="process"'


def _times() -> Iterator[tuple[int, float]]:
    """Every scrape from START to AT + 1 min: (unix time, seconds since the onset)."""
    at = START
    while at <= AT + timedelta(minutes=1):
        yield int(at.timestamp()), (at - ONSET).total_seconds()
        at += timedelta(seconds=STEP)


def _recording(state: str, cores: float) -> str:
    """A statement in `state` open since ONSET; PostgreSQL's processes at `cores` from then."""
    lines = ["# TYPE pg_up gauge"]
    lines += [f"pg_up{{{PG}}} 1 {t}" for t, _ in _times()]
    lines += ["# TYPE pg_settings_max_connections gauge"]
    lines += [f"pg_settings_max_connections{{{PG}}} 100 {t}" for t, _ in _times()]
    lines += ["# TYPE pg_stat_activity_count gauge"]
    lines += [f'pg_stat_activity_count{{{PG},datname="shop",state="active"}} 2 {t}'
              for t, _ in _times()]  # fmt: skip
    lines += ["# TYPE pg_locks_count gauge"]
    lines += [f'pg_locks_count{{{PG},datname="shop",mode="exclusivelock"}} 0 {t}'
              for t, _ in _times()]  # fmt: skip
    lines += ["# TYPE pg_stat_database_deadlocks gauge"]  # postgres_exporter's name: no _total
    lines += [f'pg_stat_database_deadlocks{{{PG},datname="shop"}} 0 {t}'
              for t, _ in _times()]  # fmt: skip
    lines += ["# TYPE pg_stat_activity_max_tx_duration gauge"]
    for name in ("active", "idle in transaction"):
        lines += [
            f'pg_stat_activity_max_tx_duration{{{PG},datname="shop",state="{name}"}} '
            f"{max(0.0, since) if name == state else 0.0} {t}"
            for t, since in _times()
        ]
    lines += ["# TYPE namedprocess_namegroup_cpu_seconds counter"]
    used = 0.0
    for t, since in _times():
        used += STEP * (cores if since >= 0 else 0.05)
        lines.append(
            f'namedprocess_namegroup_cpu_seconds_total{{{PROCESSES},groupname="postgres",'
            f'mode="user"}} {used:.2f} {t}'
        )
    return "\n".join([*lines, "# EOF"]) + "\n"


@pytest.fixture(
    params=[("active", 1.9), ("active", 0.02), ("idle in transaction", 0.02)],
    ids=["runaway", "active-but-quiet", "idle"],
)
async def analysed(
    request: pytest.FixtureRequest, pool: asyncpg.Pool[Any], tmp_path: Path
) -> AsyncIterator[tuple[str, str, str]]:
    state, cores = request.param
    source = tmp_path / "series.om"
    source.write_text(_recording(state, cores))
    build_tsdb(source, tmp_path / "tsdb")
    labels = {"alertname": "PostgresqlLongRunningTransaction", "severity": "warning",
              "instance": "127.0.0.1:9187", "datname": "shop"}  # fmt: skip
    found = MAPPING.resolve(labels)
    assert isinstance(found, Investigation) and found.runbook == "postgres_trouble", found
    async with LocalPrometheus(tmp_path / "tsdb") as server:
        answer, tree = await analyse_alert(pool, server.url, found, AT)
    assert answer.synthesis is not None and answer.synthesis.primary is not None
    primary = answer.synthesis.primary
    yield f"{state} at {cores} cores", f"{primary.id}: {primary.title}", findings(answer, tree)


async def test_a_long_statement_that_burns_the_cpu_is_a_runaway_query(
    analysed: tuple[str, str, str],
) -> None:
    case, primary, text = analysed
    if case == "active at 1.9 cores":  # PostgreSQL's processes hot since the statement began
        assert primary.startswith("runaway_query: ") and "CPU" in primary, text
    else:  # a long statement with the CPU quiet (waiting), or a transaction someone forgot
        assert primary.startswith("long_transaction: "), text
