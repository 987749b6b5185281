"""Issue 54: a service slow while everything it calls answers as before — the time is its
own. A real Prometheus over series in the standard names (prometheus_client's request
histogram, Prometheus's own scrape_duration_seconds, postgres_exporter): web's /checkout
p95 rises to seconds, PostgreSQL stays idle with free slots and no locks, and web's own
/metrics — which calls nothing — answers slowly too. The analysis says the service itself
is slow (its CPU, a quota, its event loop), not a slow path to the database; with web's
/metrics fast it stays with the path (tests/…/test_standard_exporters_real_prometheus.py,
slow-db)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest

from bot.alerts.mapping import Investigation
from demo.services import unavailable_reason
from tests.reasoning_core.answers.alert_analysis import analyse_alert, findings
from tests.recordings import served_series

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

START = 1_764_500_000
SLOW = (START + 50 * 60, START + 60 * 60)
END = SLOW[1]
STEP = 15
WEB = 'instance="10.0.0.7:8000",job="web"'
PG = 'instance="10.0.0.8:9187",job="postgres"'
BUCKETS = ("0.1", "0.5", "1", "2.5", "5", "+Inf")


def _slow(t: int) -> bool:
    return SLOW[0] <= t < SLOW[1]


def _openmetrics() -> str:
    times = range(START, END + 1, STEP)
    lines = ["# TYPE http_request_duration_seconds histogram"]
    route = f'{WEB},method="POST",route="/checkout"'
    for le in BUCKETS:
        count = 0.0
        for t in times:
            # 5 requests/s: under 0.1 s, or (slowed) between 2.5 s and 5 s
            count += 5 * STEP if le in {"5", "+Inf"} or not _slow(t) else 0
            lines.append(f'http_request_duration_seconds_bucket{{{route},le="{le}"}} {count} {t}')
    lines.append("# TYPE http_requests counter")
    total = 0.0
    for t in times:
        total += 5 * STEP
        lines.append(
            f'http_requests_total{{{WEB},method="POST",route="/checkout",status="200"}} '
            f"{total} {t}"
        )
    gauges: dict[str, list[tuple[str, Callable[[int], float]]]] = {
        "scrape_duration_seconds": [(WEB, lambda t: 1.4 if _slow(t) else 0.004)],
        "up": [(WEB, lambda t: 1.0), (PG, lambda t: 1.0)],
        "pg_up": [(PG, lambda t: 1.0)],
        "pg_settings_max_connections": [(PG, lambda t: 100.0)],
        "pg_stat_activity_count": [
            (PG + ',datname="shop",state="active"', lambda t: 1.0),
            (PG + ',datname="shop",state="idle"', lambda t: 4.0),
        ],
        "pg_locks_count": [(PG + ',datname="shop",mode="exclusivelock"', lambda t: 0.0)],
    }
    for name, series in gauges.items():
        lines.append(f"# TYPE {name} gauge")
        for labels, value in series:
            lines.extend(f"{name}{{{labels}}} {value(t)} {t}" for t in times)
    return "\n".join(lines) + "\n# EOF\n"


@pytest.fixture(scope="module")
async def prometheus() -> AsyncIterator[str]:
    async with served_series(_openmetrics(), prefix="whytree-own-time-") as url:
        yield url


async def test_a_service_slow_in_itself_is_said_as_its_own_time(
    pool: asyncpg.Pool[Any], prometheus: str
) -> None:
    found = Investigation(
        runbook="http_service_trouble",
        parameters={"job": "web"},
        questions={"en": "why is web's /checkout slow?"},
    )
    at = datetime.fromtimestamp(SLOW[0] + 5 * 60, UTC)
    answer, tree = await analyse_alert(pool, prometheus, found, at)
    assert answer.synthesis is not None, findings(answer, tree)
    assert answer.synthesis.primary.id == "own_time", findings(answer, tree)
    text = answer.text.lower()
    assert "the service itself is slow" in text and "cpu quota" in text, answer.text
    assert "scrape duration" in text and "1.4" in answer.text, answer.text
    assert answer.confidence >= 0.5, findings(answer, tree)
    ranked = [r.id for r in answer.synthesis.ranking]
    assert "slow_db_path" not in ranked[:1], ranked
