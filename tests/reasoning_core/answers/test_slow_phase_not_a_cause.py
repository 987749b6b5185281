"""Where the time goes is not what broke: a failing probe whose "processing" phase takes
3 s, with nothing that measures why (PostgreSQL idle and healthy, the service up, no
proxy), is reported as a possible place to look, never as an established cause — the
holdout fault `proxy-frozen` (the database proxy frozen) was reported as "A slow phase of
the probe itself: processing" at 0.94. Blackbox exporter's and postgres_exporter's series
turned into TSDB blocks by promtool and served by a real Prometheus."""

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
from reasoning_core.tree.aggregation import ELIMINATION_MAX
from tests.reasoning_core.answers.alert_analysis import (
    MAPPING,
    RUNBOOKS,
    analyse_alert,
    findings,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

START = datetime(2026, 11, 27, 4, 0, tzinfo=UTC)
ONSET = START + timedelta(minutes=20)
AT = ONSET + timedelta(seconds=90)
TARGET = "http://127.0.0.1:8080/checkout"
PROBE = f'instance="{TARGET}",job="blackbox"'
WEB = 'instance="127.0.0.1:8080",job="web"'
PG = 'instance="127.0.0.1:9187",job="postgres"'
PROCESSES = 'instance="127.0.0.1:9256",job="process"'


def _times() -> Iterator[tuple[int, bool]]:
    """Every 5 s from START to a minute past AT: (unix time, after the onset)."""
    at = START
    while at <= AT + timedelta(minutes=1):
        yield int(at.timestamp()), at >= ONSET
        at += timedelta(seconds=5)


def _recording() -> str:
    lines = ["# TYPE probe_success gauge"]
    lines += [f"probe_success{{{PROBE}}} {0 if late else 1} {t}" for t, late in _times()]
    lines += ["# TYPE probe_duration_seconds gauge"]
    lines += [f"probe_duration_seconds{{{PROBE}}} {3.05 if late else 0.02} {t}"
              for t, late in _times()]  # fmt: skip
    lines += ["# TYPE probe_http_status_code gauge"]
    lines += [f"probe_http_status_code{{{PROBE}}} 200 {t}" for t, _ in _times()]
    lines += ["# TYPE probe_http_duration_seconds gauge"]
    for phase in ("resolve", "connect", "processing", "transfer"):
        lines += [
            f'probe_http_duration_seconds{{{PROBE},phase="{phase}"}} '
            f"{3.0 if late and phase == 'processing' else 0.004} {t}"
            for t, late in _times()
        ]
    # PostgreSQL healthy and idle behind it, no proxy on the way, the service up and on the
    # same version: every first-plan hypothesis is ruled out, and the revision's fallback —
    # the probe's slowest phase — is all that is left
    lines += ["# TYPE up gauge"]
    for labels in (WEB, PROBE, PG):
        lines += [f"up{{{labels}}} 1 {t}" for t, _ in _times()]
    lines += ["# TYPE scrape_duration_seconds gauge"]
    lines += [f"scrape_duration_seconds{{{PG}}} 0.02 {t}" for t, _ in _times()]
    lines += ["# TYPE pg_up gauge"]
    lines += [f"pg_up{{{PG}}} 1 {t}" for t, _ in _times()]
    lines += ["# TYPE pg_settings_max_connections gauge"]
    lines += [f"pg_settings_max_connections{{{PG}}} 100 {t}" for t, _ in _times()]
    lines += ["# TYPE pg_stat_activity_count gauge"]
    lines += [f'pg_stat_activity_count{{{PG},datname="shop",state="{state}"}} {n} {t}'
              for state, n in (("active", 1), ("idle", 4)) for t, _ in _times()]  # fmt: skip
    lines += ["# TYPE pg_locks_count gauge"]
    lines += [f'pg_locks_count{{{PG},datname="shop",mode="exclusivelock"}} 0 {t}'
              for t, _ in _times()]  # fmt: skip
    lines += ["# TYPE namedprocess_namegroup_num_procs gauge"]
    lines += [f'namedprocess_namegroup_num_procs{{{PROCESSES},groupname="web"}} 1 {t}'
              for t, _ in _times()]  # fmt: skip
    return "\n".join([*lines, "# EOF"]) + "\n"


async def test_a_failing_probe_with_nothing_measured_behind_it_establishes_no_cause(
    pool: asyncpg.Pool[Any], tmp_path: Path
) -> None:
    source = tmp_path / "series.om"
    source.write_text(_recording())
    build_tsdb(source, tmp_path / "tsdb")
    labels = {"alertname": "BlackboxProbeFailed", "severity": "warning", "instance": TARGET,
              "job": "blackbox"}  # fmt: skip
    found = MAPPING.resolve(labels)
    assert isinstance(found, Investigation) and found.runbook == "endpoint_probe", found
    async with LocalPrometheus(tmp_path / "tsdb") as server:
        answer, tree = await analyse_alert(pool, server.url, found, AT)
    text = findings(answer, tree)
    synthesis = answer.synthesis
    assert synthesis is not None and synthesis.primary is not None, text
    assert synthesis.by_elimination or synthesis.not_established, text
    assert answer.confidence <= ELIMINATION_MAX, text


def test_the_probes_slowest_phase_never_measures_a_cause() -> None:
    """The revision's fallback, when every first-plan hypothesis is ruled out: whatever it
    finds is where to look, held below "established" like any cause no check measured."""
    runbook = RUNBOOKS.runbooks["endpoint_probe"]
    (slow_phase,) = [h for h in runbook.hypotheses if h.id == "slow_phase"]
    assert slow_phase.fallback
    assert all(not runbook.check(c).measures for c in slow_phase.checks)
