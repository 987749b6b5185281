"""The pg_sessions tool on a real PostgreSQL: a session holds a row lock, another waits for
it, and the tool names the holder, its state and its statement (masked); it runs only its
named queries, and an unreachable server is a clear failure that names no DSN."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest

from reasoning_core.runbooks.blockers import blocking_session_rows
from reasoning_core.runbooks.rules import BlockingSessionRule
from reasoning_core.tools.base import ToolRequest
from storage.pg_sessions import PgSessionsTool
from tests.pg import WAITERS, WAITING_STATEMENT, row_lock_held


@pytest.fixture
async def lock_held(database_url: str) -> AsyncIterator[None]:
    async with row_lock_held(database_url):
        yield


async def test_the_blocker_and_its_statement_are_named(database_url: str, lock_held: None) -> None:
    result = await PgSessionsTool(database_url).run(ToolRequest(query="blockers"))

    assert result.ok, result.error
    assert len({r["waiting_pid"] for r in result.rows}) == WAITERS
    # the queue: the first waiter blocks the later ones, the holder blocks the first
    idle = {
        r["blocking_pid"]: r for r in result.rows if r["blocking_state"] == "idle in transaction"
    }
    assert len(idle) == 1, result.rows  # one holder at the head of the queue
    [row] = idle.values()
    assert row["blocking_state"] == "idle in transaction"
    assert row["blocking_query"].startswith("SELECT sold FROM stock WHERE id = 1")
    assert "s3cr3t" not in row["blocking_query"], "a token in a statement is masked"
    assert row["waiting_query"] == WAITING_STATEMENT
    assert row["blocking_xact_seconds"] >= 0

    evidence = blocking_session_rows(
        BlockingSessionRule(rule="blocking_session"), result.rows, "en"
    )
    assert evidence.confirmed is True
    head = f"{WAITERS} session(s) wait for a lock held by pid {row['blocking_pid']} "
    assert evidence.text.startswith(head), evidence.text  # the head, not the first waiter
    assert "idle in transaction" in evidence.text
    assert "“SELECT sold FROM stock WHERE id = 1" in evidence.text
    assert evidence.data["blocking_statement"] == row["blocking_query"]


async def test_no_lock_wait_is_no_row(database_url: str) -> None:
    result = await PgSessionsTool(database_url).run(ToolRequest(query="blockers"))

    assert result.ok and result.rows == []
    evidence = blocking_session_rows(BlockingSessionRule(rule="blocking_session"), [], "ru")
    assert evidence.confirmed is False
    assert evidence.text == "сейчас ни одна сессия не ждёт блокировку"


async def test_only_the_named_queries_run(database_url: str) -> None:
    result = await PgSessionsTool(database_url).run(ToolRequest(query="DROP TABLE stock"))

    assert not result.ok and result.error_kind == "refused"
    assert "known: blockers" in (result.error or "")


async def test_an_unreachable_server_is_a_clear_failure_without_the_dsn() -> None:
    dsn = "postgresql://monitor:hunter2@127.0.0.1:1/postgres"
    result = await PgSessionsTool(dsn, connect_timeout_sec=2).run(ToolRequest(query="blockers"))

    assert not result.ok and result.error_kind == "unavailable"
    assert (result.error or "").startswith("database sessions unavailable: cannot connect")
    assert "hunter2" not in (result.error or "") and "127.0.0.1" not in (result.error or "")


async def test_a_refusal_says_postgresql_s_own_words_not_a_class_name(database_url: str) -> None:
    """What the lab's connection fault does to the monitor's login: the server refuses it."""
    refused = database_url.replace("postgresql://", "postgresql://no_such_role_x@", 1)
    if "@" in database_url.split("://", 1)[1]:  # a DSN that names its user already
        scheme, rest = database_url.split("://", 1)
        refused = f"{scheme}://no_such_role_x@{rest.split('@', 1)[1]}"
    result = await PgSessionsTool(refused).run(ToolRequest(query="blockers"))

    assert not result.ok
    assert 'role "no_such_role_x" does not exist' in (result.error or ""), result.error
    assert "Error" not in (result.error or "")


async def test_a_holder_that_is_itself_waiting_says_on_what(database_url: str) -> None:
    """The holder is running, not idle: its transaction updated the row, then sleeps (as a
    commit waits for a synchronous standby): the queue behind it is that wait's effect,
    and the evidence says what the holder waits on. An idle holder's ClientRead is not
    named (see the test above)."""
    setup = await asyncpg.connect(database_url)
    await setup.execute(
        "CREATE TABLE IF NOT EXISTS stock (id int PRIMARY KEY, sold int);"
        "INSERT INTO stock VALUES (1, 0) ON CONFLICT DO NOTHING"
    )
    holder, waiter = await asyncpg.connect(database_url), await asyncpg.connect(database_url)
    await holder.execute("BEGIN")
    await holder.execute("UPDATE stock SET sold = sold WHERE id = 1")
    sleeping = asyncio.create_task(holder.execute("SELECT pg_sleep(30)"))
    waiting = asyncio.create_task(waiter.execute(WAITING_STATEMENT))
    try:
        for _ in range(200):
            waits = await setup.fetch("SELECT wait_event FROM pg_stat_activity")
            if {"PgSleep", "transactionid"} <= {r["wait_event"] for r in waits}:
                break
            await asyncio.sleep(0.05)
        result = await PgSessionsTool(database_url).run(ToolRequest(query="blockers"))
        assert result.ok, result.error
        [row] = [r for r in result.rows if r["blocking_state"] == "active"]
        assert (row["blocking_wait_type"], row["blocking_wait"]) == ("Timeout", "PgSleep")
        evidence = blocking_session_rows(
            BlockingSessionRule(rule="blocking_session"), result.rows, "en"
        )
        assert "(active, itself waiting on Timeout PgSleep, its transaction open" in (
            evidence.text
        ), evidence.text
        assert evidence.data["blocking_wait"] == "Timeout PgSleep"
        russian = blocking_session_rows(
            BlockingSessionRule(rule="blocking_session"), result.rows, "ru"
        )
        assert "сам ждёт Timeout PgSleep" in russian.text
    finally:
        await setup.execute(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
        )
        await asyncio.gather(sleeping, return_exceptions=True)
        await holder.execute("ROLLBACK")
        await waiting
        for conn in (holder, waiter, setup):
            await conn.close()
