"""Accounts, the audit trail, token usage and statistics against a real PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from reasoning_core.errors import NotFoundError, StoreError
from reasoning_core.models import Usage
from reasoning_core.ports import AuditEntry, Exchange
from storage.admin import PgAccountStore
from storage.audit import PgAuditStore
from storage.exchanges import PgExchangeStore
from storage.pool import create_pool
from storage.sessions import PgSessionStore
from storage.stats import PgStatsStore
from storage.usage import PgUsageStore, utc_today
from storage.users import PgUserStore

NOW = datetime.now(UTC)


async def _exchange(
    pool: asyncpg.Pool[Any],
    user_id: int,
    *,
    strategy: str = "quick",
    confidence: float = 0.9,
    seconds: float = 1.0,
    ago: timedelta = timedelta(minutes=5),
) -> None:
    await PgUserStore(pool).touch(user_id)
    session = await PgSessionStore(pool).current(user_id=user_id, chat_id=user_id)
    started = NOW - ago
    await PgExchangeStore(pool).record(
        Exchange(
            session_id=session,
            user_id=user_id,
            chat_id=user_id,
            question="q",
            answer="a",
            strategy=strategy,
            confidence=confidence,
            started_at=started,
            finished_at=started + timedelta(seconds=seconds),
            usage=Usage(prompt_tokens=100, completion_tokens=10, llm_calls=1),
        )
    )


# --- accounts ----------------------------------------------------------------------


async def test_unknown_ids_return_none_and_create_nothing(pool: asyncpg.Pool[Any]) -> None:
    accounts = PgAccountStore(pool)
    assert await accounts.get(999) is None
    assert await accounts.set_status(999, "banned", by=1, reason="x") is None
    assert await accounts.set_allowed(999, True, by=1) is None
    assert await accounts.count() == 0


async def test_ban_keeps_reason_and_who_unban_clears_reason(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(5, username="eve")
    accounts = PgAccountStore(pool)
    banned = await accounts.set_status(5, "banned", by=1, reason="spam")
    assert banned is not None
    assert (banned.status, banned.ban_reason, banned.status_changed_by) == ("banned", "spam", 1)
    assert banned.status_changed_at is not None
    active = await accounts.set_status(5, "active", by=2)
    assert active is not None
    assert (active.status, active.ban_reason, active.status_changed_by) == ("active", None, 2)


async def test_allowlist_flag_round_trips(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(6)
    accounts = PgAccountStore(pool)
    assert (await accounts.get(6)).allowed is False  # type: ignore[union-attr]
    assert (await accounts.set_allowed(6, True, by=1)).allowed is True  # type: ignore[union-attr]
    assert (await accounts.set_allowed(6, False, by=1)).allowed is False  # type: ignore[union-attr]


async def test_pages_are_by_last_contact_with_question_counts(pool: asyncpg.Pool[Any]) -> None:
    users = PgUserStore(pool)
    for user_id in range(1, 26):
        await users.touch(user_id)
    await _exchange(pool, 3)
    await _exchange(pool, 3)
    accounts = PgAccountStore(pool)
    first = await accounts.page(offset=0, limit=20)
    second = await accounts.page(offset=20, limit=20)
    assert len(first) == 20 and len(second) == 5
    assert first[0].id == 3 and first[0].questions == 2  # touched last
    assert {a.id for a in first + second} == set(range(1, 26))
    assert await accounts.page(offset=10**6, limit=20) == []
    assert await accounts.count() == 25


# --- audit -------------------------------------------------------------------------


async def test_audit_is_newest_first_and_cut(pool: asyncpg.Pool[Any]) -> None:
    audit = PgAuditStore(pool)
    first = await audit.record(AuditEntry(admin_id=1, action="ban", args="5 spam", outcome="ok"))
    second = await audit.record(AuditEntry(admin_id=1, chat_id=-10, action="x", args="y" * 900))
    assert second > first
    newest, oldest = await audit.recent(10)
    assert (newest.id, newest.chat_id, len(newest.args)) == (second, -10, 500)
    assert (oldest.action, oldest.args, oldest.outcome) == ("ban", "5 spam", "ok")
    assert oldest.created_at is not None
    assert len(await audit.recent(1)) == 1


# --- usage -------------------------------------------------------------------------


async def test_usage_adds_up_per_day_also_concurrently(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(8)
    usage = PgUsageStore(pool)
    call = Usage(prompt_tokens=10, completion_tokens=2, llm_calls=1)
    await asyncio.gather(*(usage.add(8, call) for _ in range(20)))
    await usage.add(8, call, day=utc_today() - timedelta(days=1))
    await usage.add(8, call, day=utc_today() - timedelta(days=30))
    today = await usage.on(8, utc_today())
    assert today == Usage(prompt_tokens=200, completion_tokens=40, llm_calls=20)
    assert await usage.on(8, date(2000, 1, 1)) == Usage()
    week = await usage.recent(8, days=7)
    assert [d.day for d in week] == [utc_today(), utc_today() - timedelta(days=1)]
    assert week[0].tokens == 240


async def test_usage_of_an_unknown_user_is_not_found(pool: asyncpg.Pool[Any]) -> None:
    with pytest.raises(NotFoundError):
        await PgUsageStore(pool).add(12345, Usage(prompt_tokens=1))


# --- statistics --------------------------------------------------------------------


async def test_stats_per_strategy_and_window(pool: asyncpg.Pool[Any]) -> None:
    await _exchange(pool, 1, confidence=0.9, seconds=1)
    await _exchange(pool, 1, confidence=0.5, seconds=3)
    await _exchange(pool, 2, strategy="decline", confidence=0.8, seconds=0.2)
    await _exchange(pool, 2, confidence=0.1, ago=timedelta(days=3))  # outside 24h
    await pool.execute(
        """INSERT INTO trees (id, task, status, revision) VALUES
           ('t1', 'why', 'completed', 1), ('t2', 'why 2', 'active', 0)"""
    )
    stats = await PgStatsStore(pool).stats(NOW - timedelta(hours=24))
    assert (stats.questions, stats.below_threshold, stats.declines) == (3, 1, 1)
    assert (stats.active_users, stats.llm_calls, stats.prompt_tokens) == (2, 3, 300)
    assert (stats.trees, stats.revisions) == (2, 1)
    quick = next(s for s in stats.strategies if s.strategy == "quick")
    assert quick.questions == 2 and quick.below_threshold == 1
    assert quick.mean_confidence == pytest.approx(0.7)
    assert quick.median_seconds == pytest.approx(2.0)
    assert quick.p95_seconds == pytest.approx(2.9)
    assert stats.deep_jobs == {}
    week = await PgStatsStore(pool).stats(NOW - timedelta(days=7))
    assert week.questions == 4


async def test_deep_jobs_are_counted_per_status(pool: asyncpg.Pool[Any]) -> None:
    stats = PgStatsStore(pool)
    assert await stats.deep_job_counts() == {}
    await pool.execute(
        """INSERT INTO deep_jobs (user_id, chat_id, question, context, status) VALUES
               (1, 1, 'q', '{}', 'queued'), (1, 1, 'q', '{}', 'running'),
               (1, 1, 'q', '{}', 'done'), (1, 1, 'q', '{}', 'done');
           INSERT INTO deep_jobs (user_id, chat_id, question, context, status, created_at)
           VALUES (1, 1, 'q', '{}', 'failed', now() - interval '9 days')"""
    )
    assert await stats.deep_job_counts() == {"queued": 1, "running": 1, "done": 2, "failed": 1}
    window = await stats.stats(NOW - timedelta(days=1))
    assert window.deep_jobs == {"queued": 1, "running": 1, "done": 2}


async def test_ping_measures_and_a_closed_pool_is_a_store_error(database_url: str) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=2)
    stats = PgStatsStore(pool)
    assert 0 <= await stats.ping() < 3
    await pool.close()
    with pytest.raises(StoreError, match="unreachable"):
        await stats.ping()
    with pytest.raises(StoreError):
        await stats.stats(NOW)
