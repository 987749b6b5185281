"""A deploy stops `whytree run` with SIGTERM in the middle of a deep analysis and of an
alert analysis (real processes, real PostgreSQL, the fake Telegram server).

The analyses are held in the middle by a lock the test takes on the table their checks
read, so "in the middle" is a fact (the deep jobs are running and their checks wait on
the lock), not a guess of timing. With a drain longer than the work, both finish in the
stopping process: answered once, their rows final, nothing run again by the next process.
With a drain shorter than the work, both are handed back as the process exits (pending
and queued again, no lease left to run out) and the next process finishes them.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import asyncpg
import pytest

from benchmarks.harness.bot_process import START_WITHIN_SEC, BotProcess, bot_env
from benchmarks.harness.polling_bot import free_port
from benchmarks.scale import start_replicas, stop_replicas
from demo.dataset import ExampleQuestion
from fake_servers.alertmanager import alert, notification, post_alerts
from fake_servers.telegram.server import FakeTelegramServer

pytestmark = pytest.mark.slow

CHAT, ALERT_CHAT = 7301, -1007301
TOKEN = "graceful-stop-token"
#: Far beyond anything the test waits for: an update taken over "after the lease" would
#: show as a test that runs out of time, not as a pass.
LEASE_SEC = 300.0
WITHIN_SEC = 180.0


async def _until(what: str, condition: Callable[[], Awaitable[bool]], proc: BotProcess) -> None:
    deadline = time.monotonic() + WITHIN_SEC
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}:\n{proc.stderr()[-3000:]}")
        await asyncio.sleep(0.1)


async def _up(telegram: FakeTelegramServer, proc: BotProcess) -> None:
    """Until the process polls Telegram twice (up, and its claim loop has run)."""
    before = len(telegram.calls_of("getUpdates"))
    deadline = time.monotonic() + START_WITHIN_SEC
    while len(telegram.calls_of("getUpdates")) < before + 2:
        if not proc.alive or time.monotonic() > deadline:
            raise AssertionError(f"whytree run did not start:\n{proc.stderr()[-3000:]}")
        await asyncio.sleep(0.05)


@asynccontextmanager
async def _locked(database_url: str) -> AsyncIterator[asyncpg.Connection[Any]]:
    """demo.hour_stats locked against every reader until the block's connection commits."""
    conn = await asyncpg.connect(database_url)
    tx = conn.transaction()
    await tx.start()
    await conn.execute("LOCK TABLE demo.hour_stats IN ACCESS EXCLUSIVE MODE")
    try:
        yield conn
    finally:
        if not conn.is_closed():
            await tx.rollback()
            await conn.close()


def _env(database_url: str, telegram: FakeTelegramServer, port: int, drain_sec: float) -> Any:
    return bot_env(
        database_url=database_url,
        telegram_url=telegram.base_url,
        llm_url=None,
        lease_sec=LEASE_SEC,
        DRAIN_TIMEOUT_SEC=str(drain_sec),
        API_LISTEN=f"127.0.0.1:{port}",
        ALERT_WEBHOOK_TOKEN=TOKEN,
        ALERT_CHATS=f"default:{ALERT_CHAT}",
        TOOLS_SQL_TIMEOUT_MS="300000",
    )


async def _ask_and_alert(telegram: FakeTelegramServer, port: int, cells: list[str]) -> None:
    telegram.push_message(CHAT, f"Why did traffic drop on cell {cells[0]}?")
    labels = {"alertname": "CellTrafficDrop", "cell": cells[1], "severity": "page"}
    async with aiohttp.ClientSession() as session:
        status, body = await post_alerts(
            session, f"http://127.0.0.1:{port}", notification([alert(labels)]), token=TOKEN
        )
    assert status == 200, body


async def _both_held_mid_analysis(conn: asyncpg.Connection[Any]) -> bool:
    """The question's update and the alert's analysis both held by the process, and the
    checks' reader session waiting on the lock (the SQL tool's one connection: the other
    analysis's checks queue behind it)."""
    held = await conn.fetchval(
        "SELECT (SELECT count(*) FROM inbox_updates WHERE status = 'processing')"
        " + (SELECT count(*) FROM alert_analyses WHERE status = 'running')"
    )
    waiting = await conn.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        " AND usename = 'whytree_reader'"
    )
    return bool(held == 2 and waiting >= 1)


def _reports(telegram: FakeTelegramServer, chat: int) -> list[str]:
    return [m.text for m in telegram.sent_messages(chat) if "Primary cause" in m.text]


async def _rows(database_url: str) -> dict[str, list[dict[str, Any]]]:
    conn = await asyncpg.connect(database_url)
    try:
        inbox = await conn.fetch("SELECT status, attempts, lease_until FROM inbox_updates")
        alerts = await conn.fetch("SELECT status, attempts FROM alert_analyses")
        jobs = await conn.fetch("SELECT key, status, attempts FROM deep_jobs ORDER BY id")
    finally:
        await conn.close()
    return {
        "inbox": [dict(r) for r in inbox],
        "alerts": [dict(r) for r in alerts],
        "jobs": [dict(r) for r in jobs],
    }


async def _stop(proc: BotProcess) -> int:
    """SIGTERM, and the process's exit code once it has drained."""
    assert proc.proc is not None
    proc.proc.send_signal(signal.SIGTERM)
    return await asyncio.wait_for(proc.wait_dead(), WITHIN_SEC)


@asynccontextmanager
async def _held_mid_analysis(
    database_url: str, telegram: FakeTelegramServer, proc: BotProcess, port: int, cells: list[str]
) -> AsyncIterator[None]:
    """`proc` up, a question and an alert sent to it, and both analyses held on the lock
    until the block ends."""
    await _up(telegram, proc)
    async with _locked(database_url) as lock:
        await _ask_and_alert(telegram, port, cells)
        await _until("both analyses on the lock", lambda: _both_held_mid_analysis(lock), proc)
        yield


@pytest.fixture
def drop_cells(demo_examples: list[ExampleQuestion]) -> list[str]:
    return [e.cellname for e in demo_examples if e.kind == "technical"][:2]


async def test_sigterm_lets_the_analyses_in_flight_finish_and_nothing_runs_again(
    database_url: str, telegram: FakeTelegramServer, drop_cells: list[str]
) -> None:
    port = free_port()
    first = BotProcess(_env(database_url, telegram, port, drain_sec=120), name="draining")
    await first.start()
    try:
        async with _held_mid_analysis(database_url, telegram, first, port, drop_cells):
            assert first.proc is not None
            first.proc.send_signal(signal.SIGTERM)

            async def stopping() -> bool:
                return "SIGTERM: stopping" in first.stderr()

            await _until("the drain to begin", stopping, first)
            assert first.alive and not _reports(telegram, CHAT)
        # The lock is gone: both checks go on, in the stopping process.
        code = await asyncio.wait_for(first.wait_dead(), WITHIN_SEC)
    finally:
        first.kill()
    assert code == 0, first.stderr()[-3000:]
    assert len(_reports(telegram, CHAT)) == 1
    assert len(_reports(telegram, ALERT_CHAT)) == 1
    rows = await _rows(database_url)
    assert [r["status"] for r in rows["inbox"]] == ["done"]
    assert [r["status"] for r in rows["alerts"]] == ["posted"]
    assert [(r["status"], r["attempts"]) for r in rows["jobs"]] == [("done", 1), ("done", 1)]

    sent = len(telegram.sent_messages())
    second = BotProcess(_env(database_url, telegram, free_port(), drain_sec=20), name="next")
    await second.start()
    try:
        await _up(telegram, second)
        assert await _stop(second) == 0
    finally:
        second.kill()
    assert len(telegram.sent_messages()) == sent  # nothing answered, posted or run again
    assert await _rows(database_url) == rows


async def test_a_drain_shorter_than_the_work_hands_it_back_to_the_next_process_at_once(
    database_url: str, telegram: FakeTelegramServer, drop_cells: list[str]
) -> None:
    port = free_port()
    first = BotProcess(_env(database_url, telegram, port, drain_sec=0.5), name="short")
    await first.start()
    try:
        async with _held_mid_analysis(database_url, telegram, first, port, drop_cells):
            assert await _stop(first) == 0, first.stderr()[-3000:]
            handed_back = await _rows(database_url)
    finally:
        first.kill()
    assert not _reports(telegram, CHAT) and not _reports(telegram, ALERT_CHAT)
    # Handed back: claimable now, with no lease left to wait for.
    assert [(r["status"], r["lease_until"]) for r in handed_back["inbox"]] == [("pending", None)]
    assert [r["status"] for r in handed_back["alerts"]] == ["queued"]

    second = BotProcess(_env(database_url, telegram, port, drain_sec=20), name="taker")
    await second.start()
    try:
        await _up(telegram, second)

        async def answered() -> bool:
            return bool(_reports(telegram, CHAT) and _reports(telegram, ALERT_CHAT))

        await _until("both reports from the next process", answered, second)
        assert await _stop(second) == 0
    finally:
        second.kill()
    assert len(_reports(telegram, CHAT)) == 1 and len(_reports(telegram, ALERT_CHAT)) == 1
    rows = await _rows(database_url)
    assert [r["status"] for r in rows["inbox"]] == ["done"]
    assert [r["status"] for r in rows["alerts"]] == ["posted"]
    # Each deep job was taken over and continued (its key's job, a second attempt), not
    # started again as another job.
    assert [(r["status"], r["attempts"]) for r in rows["jobs"]] == [("done", 2), ("done", 2)]


async def test_a_webhook_replica_stopped_mid_analysis_hands_it_to_the_other_at_once(
    database_url: str, telegram: FakeTelegramServer, drop_cells: list[str]
) -> None:
    """Two `whytree run --webhook` replicas behind a balancer (a rolling restart): the one
    holding the analysis is stopped with a drain shorter than the work; the other takes
    the update over at once. With a 300 s lease it could not have waited for the lease:
    the test gives up well before that."""
    env = _env(database_url, telegram, free_port(), drain_sec=0.5)
    del env["API_LISTEN"]  # the replicas share nothing but the database
    procs, balancer = await start_replicas(telegram, env, 2, name="rolling")
    try:
        async with _locked(database_url) as lock:
            telegram.push_message(CHAT, f"Why did traffic drop on cell {drop_cells[0]}?")

            async def held() -> bool:  # its checks on the lock: its deep job is running
                return bool(
                    await lock.fetchval(
                        "SELECT (SELECT count(*) FROM inbox_updates WHERE status = 'processing')"
                        " * (SELECT count(*) FROM pg_stat_activity"
                        "    WHERE wait_event_type = 'Lock' AND usename = 'whytree_reader')"
                    )
                )

            await _until("a replica holding the question", held, procs[0])
            owner = await lock.fetchval("SELECT owner FROM inbox_updates")
            [stopped] = [p for p in procs if p.owner == owner]
            [other] = [p for p in procs if p is not stopped]
            assert await _stop(stopped) == 0, stopped.stderr()[-3000:]

            async def taken_by_the_other() -> bool:
                row = await lock.fetchrow("SELECT owner, status FROM inbox_updates")
                return row is not None and row["owner"] == other.owner

            await _until("the other replica taking it over", taken_by_the_other, other)
        # The lock is gone: the other replica finishes the analysis.

        async def answered() -> bool:  # and its outcome recorded (its drain is short)
            rows = await _rows(database_url)
            return bool(_reports(telegram, CHAT)) and rows["inbox"][0]["status"] == "done"

        await _until("the report from the other replica", answered, other)
    finally:
        await stop_replicas(procs, balancer)
    assert len(_reports(telegram, CHAT)) == 1
    rows = await _rows(database_url)
    assert [r["status"] for r in rows["inbox"]] == ["done"]
    assert [(r["status"], r["attempts"]) for r in rows["jobs"]] == [("done", 2)]
