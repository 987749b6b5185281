"""What a lock holder waits on, read from a real PostgreSQL and followed one link deeper
(issue 54): a commit waiting for a synchronous standby that does not exist (a scratch
cluster this module owns, synchronous_standby_names set to a ghost), sessions waiting on
each other (a deadlock, said as one), and the whole "because" step end to end — the
explorer grows the link under the confirmed lock queue and the report names the chain.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import answer_of
from reasoning_core.models import Answer
from reasoning_core.planners.runbook.links import link_proposals
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports.planning import CheckProposal, PlanningContext
from reasoning_core.runbooks import load_runbooks
from reasoning_core.runbooks.blockers import blocking_session_rows, long_holder_rows
from reasoning_core.runbooks.rules import BlockingSessionRule, LongHolderRule, SyncStandbyRule
from reasoning_core.runbooks.standby import sync_standby_rows
from reasoning_core.tools.base import ToolRequest
from reasoning_core.tree.report import render_report_text, report_of
from storage.embedded import EmbeddedPostgres
from storage.pg_sessions import PgSessionsTool
from storage.trees import PgTreeStore

pytestmark = pytest.mark.slow

GHOST = "ghost_standby"
LOCK_RUNBOOK = """
id: lock_queue
title: {en: Sessions queue on a lock, ru: Сессии ждут блокировку}
description: {en: Who holds the lock the checkouts wait for, ru: Кто держит блокировку}
triggers:
  keywords: {en: [lock], ru: [блокиров]}
  min_score: 1
hypotheses:
  - id: lock_queue
    title: {en: checkouts queue on a row lock, ru: заказы ждут блокировку строки}
    prior: 0.5
    checks: [pg_blocking_session]
include: [postgres_sessions]
"""


def lock_runbooks(folder: Path) -> Any:
    """The test's lock runbook beside the shipped check sets (their links included)."""
    (folder / "lock_queue.yaml").write_text(LOCK_RUNBOOK, encoding="utf-8")
    runbooks = load_runbooks([folder], include_shipped=False)
    assert runbooks.errors == []
    return runbooks


async def ask_about_the_lock(pool: asyncpg.Pool[Any], runbooks: Any, tools: Any) -> Answer:
    planner = RunbookPlanner(runbooks, tools=tools)
    analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
    question = "why do the checkouts wait on a lock?"
    ctx = PlanningContext(question=question, goal=question, language="en")
    events = [e async for e in analyst.run(ctx, user_id=7, chat_id=7)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    return answer


@pytest.fixture(scope="module")
def scratch_dsn() -> Iterator[str]:
    """A cluster of this module's own: its synchronous_standby_names is changed."""
    folder = Path(tempfile.mkdtemp(prefix="whytree-sync-"))
    server = EmbeddedPostgres(folder)
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


async def _wait_until(conn: asyncpg.Connection, sql: str, expected: int) -> None:
    for _ in range(200):
        if await conn.fetchval(sql) == expected:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never reached {expected}: {sql}")


@pytest.fixture
async def commit_waits_for_a_ghost(scratch_dsn: str) -> AsyncIterator[str]:
    """A commit waiting for the synchronous standby `GHOST` (there is none), holding the
    row's lock, and a checkout queued behind it; undone by dropping the standby."""
    admin = await asyncpg.connect(scratch_dsn)
    await admin.execute(
        "CREATE TABLE IF NOT EXISTS stock (id int PRIMARY KEY, sold int);"
        "INSERT INTO stock VALUES (1, 0) ON CONFLICT DO NOTHING"
    )
    await admin.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{GHOST}'")
    await admin.execute("SELECT pg_reload_conf()")
    holder, waiter = await asyncpg.connect(scratch_dsn), await asyncpg.connect(scratch_dsn)
    await holder.execute("BEGIN")
    await holder.execute("UPDATE stock SET sold = sold + 1 WHERE id = 1")
    committing = asyncio.create_task(holder.execute("COMMIT"))
    queued: asyncio.Task[str] | None = None
    try:
        await _wait_until(
            admin, "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'", 1
        )
        queued = asyncio.create_task(waiter.execute("UPDATE stock SET sold = sold WHERE id = 1"))
        await _wait_until(
            admin, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'", 1
        )
        yield scratch_dsn
    finally:
        await admin.execute("ALTER SYSTEM RESET synchronous_standby_names")
        await admin.execute("SELECT pg_reload_conf()")
        await asyncio.gather(committing, return_exceptions=True)
        if queued is not None:
            await asyncio.gather(queued, return_exceptions=True)
        for conn in (holder, waiter, admin):
            await conn.close()


async def test_a_commit_waiting_for_a_missing_standby_is_read_and_followed(
    commit_waits_for_a_ghost: str, tmp_path: Path
) -> None:
    tool = PgSessionsTool(commit_waits_for_a_ghost)
    blockers = await tool.run(ToolRequest(query="blockers"))
    assert blockers.ok, blockers.error
    evidence = blocking_session_rows(
        BlockingSessionRule(rule="blocking_session"), blockers.rows, "en"
    )
    assert "itself waiting on IPC SyncRep" in evidence.text, evidence.text
    assert evidence.data["blocking_wait"] == "IPC SyncRep"

    check = CheckProposal(
        key="pg_blocking_session", description="who holds it", tool="pg_sessions",
        request=ToolRequest(query="blockers"), extra={"check": "pg_blocking_session"},
    )  # fmt: skip
    [link] = link_proposals(lock_runbooks(tmp_path).get("lock_queue"), [(check, evidence)], "en")
    assert link.key == "holder_sync_standby"
    # its time is the standby's, not its own statement's
    long = long_holder_rows(LongHolderRule(rule="long_holder", min_seconds=0), blockers.rows, "en")
    assert long.confirmed is False and "waiting on IPC SyncRep" in long.text, long.text

    replication = await tool.run(ToolRequest(query="sync_replication"))
    assert replication.ok, replication.error
    [row] = replication.rows
    assert row["standby_names"] == GHOST and row["sync_standbys"] == 0
    assert row["waiting_commits"] == 1
    standby = sync_standby_rows(SyncStandbyRule(rule="sync_standby"), replication.rows, "en")
    assert standby.confirmed is True
    assert standby.text.startswith(f"synchronous_standby_names is “{GHOST}” but no synchronous")


async def test_the_report_names_the_standby_as_the_cause_of_the_lock_queue(
    commit_waits_for_a_ghost: str, pool: asyncpg.Pool[Any], tmp_path: Path
) -> None:
    tools = {"pg_sessions": PgSessionsTool(commit_waits_for_a_ghost)}
    answer = await ask_about_the_lock(pool, lock_runbooks(tmp_path), tools)
    synthesis = answer.synthesis
    assert synthesis is not None

    assert synthesis.primary.id == "lock_queue>holder_sync_standby"
    assert synthesis.chain[0].startswith("checkouts queue on a row lock")
    assert synthesis.chain[1] == (
        "the holder's commit waits for a synchronous standby (IPC SyncRep)"
    )
    assert synthesis.chain[2].startswith(
        f"synchronous replication holds the commits: synchronous_standby_names is “{GHOST}”"
    )
    assert not synthesis.chain_open
    assert synthesis.confidence >= 0.5  # the chain is closed: the cause is established
    text = render_report_text(report_of(answer))  # type: ignore[arg-type]
    headline = next(line for line in text.splitlines() if line.startswith("Primary cause:"))
    assert " ← the holder's commit waits for a synchronous standby" in headline
    assert "synchronous_standby_names = ''" in text  # the deepest link's recommendation


@pytest.fixture
async def holder_sleeps_in_its_transaction(database_url: str) -> AsyncIterator[str]:
    """A recount job ("stock-recount") that updated the row and now sleeps inside its
    transaction (active, Timeout PgSleep), a checkout queued behind it, the transaction
    open more than 10 s (the check set's `min_seconds`); undone by cancelling the sleep."""
    admin = await asyncpg.connect(database_url)
    await admin.execute(
        "CREATE TABLE IF NOT EXISTS stock (id int PRIMARY KEY, sold int);"
        "INSERT INTO stock VALUES (1, 0) ON CONFLICT DO NOTHING"
    )
    holder = await asyncpg.connect(
        database_url, server_settings={"application_name": "stock-recount"}
    )
    waiter = await asyncpg.connect(database_url)
    await holder.execute("BEGIN")
    await holder.execute("UPDATE stock SET sold = sold WHERE id = 1")
    sleeping = asyncio.create_task(holder.execute("SELECT pg_sleep(60)"))
    queued = asyncio.create_task(waiter.execute("UPDATE stock SET sold = sold + 1 WHERE id = 1"))
    try:
        await _wait_until(
            admin, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'", 1
        )
        await asyncio.sleep(11)  # the transaction past the check set's 10 s
        await _wait_until(
            admin,
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
            " AND now() - xact_start > interval '11 seconds'",
            1,
        )
        yield database_url
    finally:
        await admin.execute(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
        )
        await asyncio.gather(sleeping, queued, return_exceptions=True)
        await holder.execute("ROLLBACK")
        for conn in (holder, waiter, admin):
            await conn.close()


async def test_a_holder_running_its_own_long_statement_is_the_cause_of_the_queue(
    holder_sleeps_in_its_transaction: str, pool: asyncpg.Pool[Any], tmp_path: Path
) -> None:
    """Timeout PgSleep is a wait of the holder's own statement: the chain ends at the long
    transaction, not at "lock waits" stated at high confidence."""
    tools = {"pg_sessions": PgSessionsTool(holder_sleeps_in_its_transaction)}
    answer = await ask_about_the_lock(pool, lock_runbooks(tmp_path), tools)
    synthesis = answer.synthesis
    assert synthesis is not None
    assert synthesis.primary.id == "lock_queue>holder_long_statement", synthesis.primary
    assert synthesis.chain[-1].startswith("a long-running transaction holds the lock: the holder")
    assert "stock-recount" in synthesis.chain[-1] and "pg_sleep(60)" in synthesis.chain[-1]
    assert not synthesis.chain_open and synthesis.confidence >= 0.5


async def test_sessions_waiting_on_each_other_are_said_as_one_deadlock(database_url: str) -> None:
    setup = await asyncpg.connect(database_url)
    await setup.execute(
        "CREATE TABLE IF NOT EXISTS pair (id int PRIMARY KEY, v int);"
        "INSERT INTO pair VALUES (1, 0), (2, 0) ON CONFLICT DO NOTHING"
    )
    first, second = await asyncpg.connect(database_url), await asyncpg.connect(database_url)
    for conn, row in ((first, 1), (second, 2)):
        # the detector would end one at once; raised, both stay waiting while we read
        await conn.execute("SET deadlock_timeout = '10min'")
        await conn.execute("BEGIN")
        await conn.execute(f"UPDATE pair SET v = v + 1 WHERE id = {row}")
    crossing = [
        asyncio.create_task(first.execute("UPDATE pair SET v = v + 1 WHERE id = 2")),
        asyncio.create_task(second.execute("UPDATE pair SET v = v + 1 WHERE id = 1")),
    ]
    try:
        await _wait_until(
            setup, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'", 2
        )
        result = await PgSessionsTool(database_url).run(ToolRequest(query="blockers"))
        assert result.ok, result.error
        evidence = blocking_session_rows(
            BlockingSessionRule(rule="blocking_session"), result.rows, "en"
        )
        pids = {first.get_server_pid(), second.get_server_pid()}
        assert evidence.text.startswith("2 session(s) wait on each other (pids "), evidence.text
        assert "a deadlock" in evidence.text
        assert {int(p) for p in str(evidence.data["deadlock"]).split(", ")} == pids
    finally:
        await setup.execute(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        )
        await asyncio.gather(*crossing, return_exceptions=True)
        for conn in (first, second):
            await conn.execute("ROLLBACK")
        for conn in (first, second, setup):
            await conn.close()
