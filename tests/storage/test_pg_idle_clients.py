"""What filled the connection slots, asked of a real PostgreSQL (issue 54): a worker pool
("celery-worker") opens its connections and keeps them idle; the `pg_sessions` tool's
`idle_clients` names the client, and the `idle_clients` rule says it holds most of them —
the link every runbook that confirms the slots near max_connections follows
(checksets/postgres_slots.yaml)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from reasoning_core.models import Evidence
from reasoning_core.planners.runbook.links import link_proposals
from reasoning_core.ports.planning import CheckProposal
from reasoning_core.runbooks import load_runbooks
from reasoning_core.runbooks.idle_clients import idle_clients_rows
from reasoning_core.runbooks.rules import IdleClientsRule
from reasoning_core.tools.base import ToolRequest
from storage.pg_sessions import PgSessionsTool

pytestmark = pytest.mark.slow

RULE = IdleClientsRule(rule="idle_clients")


@pytest.fixture
async def idle_pool(database_url: str) -> AsyncIterator[list[asyncpg.Connection]]:
    """Seven idle connections of one client, and one busy client beside them."""
    idle = [
        await asyncpg.connect(database_url, server_settings={"application_name": "celery-worker"})
        for _ in range(7)
    ]
    yield idle
    for conn in idle:
        await conn.close()


async def test_the_client_keeping_the_connections_idle_is_named(
    idle_pool: list[asyncpg.Connection], database_url: str
) -> None:
    result = await PgSessionsTool(database_url).run(ToolRequest(query="idle_clients"))
    assert result.ok, result.error
    top = result.rows[0]
    assert top["application"] == "celery-worker" and top["idle"] == 7, result.rows
    assert top["max_connections"] > 0 and top["sessions"] >= 7
    evidence = idle_clients_rows(RULE, result.rows, "en")
    assert evidence.confirmed is True, evidence.text
    assert evidence.text.startswith("the client “celery-worker” at "), evidence.text
    assert "holds 7 of the" in evidence.text
    assert "«celery-worker»" in idle_clients_rows(RULE, result.rows, "ru").text


async def test_a_few_idle_sessions_among_many_name_no_client() -> None:
    rows = [{"application": "psql", "client": "10.0.0.5", "role": "app", "idle": 2,
             "idle_seconds": 3.0, "sessions": 30, "max_connections": 100}]  # fmt: skip
    evidence = idle_clients_rows(RULE, rows, "en")
    assert evidence.confirmed is False
    assert evidence.text.startswith("no client keeps most of the connections idle")
    assert idle_clients_rows(RULE, [], "en").confirmed is False


@pytest.mark.parametrize("runbook", ["postgres_trouble", "endpoint_probe", "http_service_trouble"])
def test_every_runbook_that_finds_the_slots_full_asks_what_filled_them(runbook: str) -> None:
    """Whichever alert came first (the probe's, the service's, PostgreSQL's own), slots
    near max_connections are followed to the requests or to the idle client."""
    found = load_runbooks().get(runbook)
    assert found is not None
    check = CheckProposal(
        key="pg_connections_high", description="slots", tool="prometheus",
        request=ToolRequest(query="q"), extra={"check": "pg_connections_high"},
    )  # fmt: skip
    full = Evidence(confirmed=True, confidence=0.9, text="near max_connections", has_data=True)
    keys = {link.key for link in link_proposals(found, [(check, full)], "en")}
    assert keys == {"slots_by_requests", "slots_by_idle_clients"}, keys
