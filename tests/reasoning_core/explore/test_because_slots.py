"""What filled PostgreSQL's connection slots (issue 54): the connections near
max_connections in series served by a real Prometheus, and the requests into the service
that holds them — twelvefold in the last two minutes (a request storm, each request with
its connection) or steady while most connections sit idle (a client keeps them). The
chain follows the alternative its check confirms."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import answer_of
from reasoning_core.models import Synthesis
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.runbooks import load_runbooks
from reasoning_core.tools.prometheus import PrometheusTool
from storage.trees import PgTreeStore

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

END = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
RUNBOOKS = load_runbooks()
PG = 'instance="127.0.0.1:9187",job="postgres"'
WEB = 'instance="127.0.0.1:8080",job="web"'


def series(*, storm: bool) -> str:
    """30 min at 15 s: 38 of 40 connections taken in the last 3 min — active in a storm of
    requests (2/s, then 24/s), idle under steady ones."""
    start = END - timedelta(minutes=30)
    names = ("up", "pg_up", "pg_settings_max_connections", "pg_stat_activity_count",
             "pg_locks_count", "pg_stat_activity_max_tx_duration",
             "pg_stat_database_deadlocks", "http_requests_total")  # fmt: skip
    families: dict[str, list[str]] = {name: [] for name in names}
    requests = 0.0
    for i in range(121):
        at = f"{(start + timedelta(seconds=15 * i)).timestamp():.0f}"
        late = i >= 109
        requests += 15 * (24 if storm and late else 2)
        active, idle = (36, 2) if late and storm else (2, 36) if late else (2, 3)
        families["up"] += [
            f"up{{{PG}}} 1 {at}",
            f'up{{instance="127.0.0.1:8080",job="web"}} 1 {at}',
        ]
        families["pg_up"].append(f"pg_up{{{PG}}} 1 {at}")
        families["pg_settings_max_connections"].append(
            f"pg_settings_max_connections{{{PG}}} 40 {at}"
        )
        families["pg_stat_activity_count"] += [
            f'pg_stat_activity_count{{{PG},datname="shop",state="active"}} {active} {at}',
            f'pg_stat_activity_count{{{PG},datname="shop",state="idle"}} {idle} {at}',
        ]
        families["pg_locks_count"].append(
            f'pg_locks_count{{{PG},datname="shop",mode="exclusivelock"}} 0 {at}'
        )
        families["pg_stat_activity_max_tx_duration"].append(
            f'pg_stat_activity_max_tx_duration{{{PG},datname="shop",state="active"}} 0.1 {at}'
        )
        families["pg_stat_database_deadlocks"].append(
            f'pg_stat_database_deadlocks{{{PG},datname="shop"}} 0 {at}'
        )
        families["http_requests_total"].append(
            f'http_requests_total{{{WEB},route="/checkout",code="200"}} {requests} {at}'
        )
    kinds = {"http_requests_total": "counter"}
    lines = []
    for name, samples in families.items():
        family = name.removesuffix("_total")
        lines += [f"# TYPE {family} {kinds.get(name, 'gauge')}", *samples]
    return "\n".join(lines) + "\n# EOF\n"


@pytest.fixture(scope="module")
def tsdbs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[bool, Path]]:
    found = {}
    for storm in (True, False):
        folder = tmp_path_factory.mktemp(f"slots-{storm}")
        (folder / "series.om").write_text(series(storm=storm), encoding="utf-8")
        build_tsdb(folder / "series.om", folder / "tsdb")
        found[storm] = folder / "tsdb"
    yield found


async def analyse(pool: asyncpg.Pool[Any], tsdb: Path) -> Synthesis:
    async with LocalPrometheus(tsdb) as prometheus:
        tools: dict[str, Any] = {"prometheus": PrometheusTool(prometheus.url)}
        planner = RunbookPlanner(RUNBOOKS, tools=tools, clock=lambda: END)
        analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
        question = "PostgresTooManyConnections"
        ctx = PlanningContext(
            question=question, goal=question, language="en",
            runbook="postgres_trouble", parameters={"instance": "127.0.0.1:9187"},
        )  # fmt: skip
        events = [e async for e in analyst.run(ctx, user_id=11, chat_id=11)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    return answer.synthesis


async def test_a_request_storm_is_what_filled_the_slots(
    pool: asyncpg.Pool[Any], tsdbs: dict[bool, Path]
) -> None:
    synthesis = await analyse(pool, tsdbs[True])
    assert synthesis.primary.id == "connections_exhausted>slots_by_requests", synthesis.chain
    assert not synthesis.chain_open
    assert synthesis.chain[-1].startswith(
        "the request rate into a service multiplied (each request takes a connection): "
    ), synthesis.chain
    assert "web" in synthesis.chain[-1] and "12" in synthesis.chain[-1], synthesis.chain


async def test_idle_clients_are_what_filled_the_slots(
    pool: asyncpg.Pool[Any], tsdbs: dict[bool, Path]
) -> None:
    synthesis = await analyse(pool, tsdbs[False])
    assert synthesis.primary.id == "connections_exhausted>slots_by_idle_clients", synthesis.chain
    assert synthesis.chain[-1].startswith("clients keep their connections open and idle: ")
