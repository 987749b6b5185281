"""PgUserStore, PgSessionStore, PgExchangeStore against a real PostgreSQL."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from reasoning_core.errors import NotFoundError, StoreError
from reasoning_core.models import Usage
from reasoning_core.ports import Exchange
from storage.clarifications import PgClarificationStore
from storage.exchanges import PgExchangeStore
from storage.pool import create_pool
from storage.sessions import PgSessionStore
from storage.users import PgUserStore

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _exchange(session_id: int, n: int, *, user_id: int = 7, chat_id: int = 70) -> Exchange:
    started = T0 + timedelta(minutes=n)
    return Exchange(
        session_id=session_id,
        user_id=user_id,
        chat_id=chat_id,
        question=f"question {n}",
        answer=f"answer {n}",
        strategy="quick",
        confidence=0.75,
        uncertainty_reason="thin data" if n % 2 else None,
        started_at=started,
        finished_at=started + timedelta(milliseconds=1234 + n),
        usage=Usage(prompt_tokens=100 + n, completion_tokens=20 + n, llm_calls=1),
    )


def _closed_port() -> int:
    """A local TCP port with nothing listening on it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# --- users -------------------------------------------------------------------------


async def test_touch_creates_then_refreshes_names_and_last_seen(pool: asyncpg.Pool[Any]) -> None:
    users = PgUserStore(pool)
    assert await users.get(42) is None

    first = await users.touch(42, username="ann", full_name="Ann A")
    assert (first.id, first.username, first.full_name) == (42, "ann", "Ann A")
    assert (first.role, first.status) == ("user", "active")
    assert first.created_at is not None
    assert first.last_seen_at is not None

    await asyncio.sleep(0.01)  # time passes: last_seen_at moves, created_at stays
    second = await users.touch(42, username="ann_b", full_name="Ann B")
    assert (second.username, second.full_name) == ("ann_b", "Ann B")
    assert second.created_at == first.created_at
    assert second.last_seen_at is not None
    assert second.last_seen_at > first.last_seen_at

    # Unknown names (None) keep what is stored.
    third = await users.touch(42)
    assert (third.username, third.full_name) == ("ann_b", "Ann B")
    assert await users.get(42) == third


async def test_user_role_and_status_are_read_from_the_row(pool: asyncpg.Pool[Any]) -> None:
    users = PgUserStore(pool)
    await users.touch(5)
    await pool.execute("UPDATE users SET role = 'admin', status = 'banned' WHERE id = 5")
    user = await users.get(5)
    assert user is not None
    assert (user.role, user.status) == ("admin", "banned")


# --- sessions ----------------------------------------------------------------------


async def test_current_session_is_stable_and_per_chat(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(7)
    sessions = PgSessionStore(pool)
    a = await sessions.current(user_id=7, chat_id=70)
    assert await sessions.current(user_id=7, chat_id=70) == a
    other_chat = await sessions.current(user_id=7, chat_id=71)
    assert other_chat != a


async def test_concurrent_current_calls_open_one_session(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(7)
    sessions = PgSessionStore(pool)
    ids = await asyncio.gather(*(sessions.current(user_id=7, chat_id=70) for _ in range(10)))
    assert len(set(ids)) == 1
    assert await pool.fetchval("SELECT count(*) FROM sessions WHERE user_id = 7") == 1


async def test_start_new_closes_the_old_session(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(7)
    sessions = PgSessionStore(pool)
    old = await sessions.current(user_id=7, chat_id=70)
    new = await sessions.start_new(user_id=7, chat_id=70)
    assert new != old
    assert await sessions.current(user_id=7, chat_id=70) == new
    ended = await pool.fetchval("SELECT ended_at FROM sessions WHERE id = $1", old)
    assert ended is not None
    assert await pool.fetchval("SELECT ended_at FROM sessions WHERE id = $1", new) is None


async def test_start_new_without_an_open_session_and_concurrently(
    pool: asyncpg.Pool[Any],
) -> None:
    await PgUserStore(pool).touch(7)
    sessions = PgSessionStore(pool)
    first = await sessions.start_new(user_id=7, chat_id=70)
    ids = await asyncio.gather(*(sessions.start_new(user_id=7, chat_id=70) for _ in range(5)))
    assert first not in ids
    open_ids = await pool.fetch(
        "SELECT id FROM sessions WHERE user_id = 7 AND chat_id = 70 AND ended_at IS NULL"
    )
    assert len(open_ids) == 1
    assert open_ids[0]["id"] in ids
    assert await sessions.current(user_id=7, chat_id=70) == open_ids[0]["id"]


async def test_session_for_unknown_user_is_not_found(pool: asyncpg.Pool[Any]) -> None:
    with pytest.raises(NotFoundError):
        await PgSessionStore(pool).current(user_id=404, chat_id=1)
    with pytest.raises(NotFoundError):
        await PgSessionStore(pool).start_new(user_id=404, chat_id=1)


# --- exchanges ---------------------------------------------------------------------


async def test_exchanges_recorded_and_returned_oldest_first(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(7)
    session = await PgSessionStore(pool).current(user_id=7, chat_id=70)
    store = PgExchangeStore(pool)
    written = [_exchange(session, n) for n in range(5)]
    ids = [await store.record(e) for e in written]
    assert ids == sorted(ids)

    assert await store.recent(session_id=session, limit=10) == written
    assert await store.recent(session_id=session, limit=2) == written[3:]
    assert await store.recent(session_id=session, limit=0) == []
    assert await store.recent(session_id=session + 1000) == []
    assert await store.count_for_user(7) == 5
    assert await store.count_for_user(8) == 0

    row = await pool.fetchrow(
        """SELECT duration_ms, prompt_tokens, completion_tokens, llm_calls
           FROM messages WHERE id = $1""",
        ids[3],
    )
    assert row is not None
    assert dict(row) == {
        "duration_ms": 1237,
        "prompt_tokens": 103,
        "completion_tokens": 23,
        "llm_calls": 1,
    }


async def test_recent_is_per_session(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(7)
    sessions = PgSessionStore(pool)
    store = PgExchangeStore(pool)
    old = await sessions.current(user_id=7, chat_id=70)
    await store.record(_exchange(old, 1))
    new = await sessions.start_new(user_id=7, chat_id=70)
    await store.record(_exchange(new, 2))
    assert [e.question for e in await store.recent(session_id=new)] == ["question 2"]
    assert [e.question for e in await store.recent(session_id=old)] == ["question 1"]


async def test_exchange_for_unknown_session_is_not_found(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(7)
    with pytest.raises(NotFoundError):
        await PgExchangeStore(pool).record(_exchange(123456, 1))


async def test_exchanges_survive_a_restart(database_url: str) -> None:
    first = await create_pool(database_url, min_size=1, max_size=2)
    try:
        await PgUserStore(first).touch(7, username="ann")
        session = await PgSessionStore(first).current(user_id=7, chat_id=70)
        await PgExchangeStore(first).record(_exchange(session, 1))
    finally:
        await first.close()

    second = await create_pool(database_url, min_size=1, max_size=2)
    try:
        assert await PgSessionStore(second).current(user_id=7, chat_id=70) == session
        (stored,) = await PgExchangeStore(second).recent(session_id=session)
        assert stored == _exchange(session, 1)
        user = await PgUserStore(second).get(7)
        assert user is not None
        assert user.username == "ann"
    finally:
        await second.close()


# --- unreachable database ----------------------------------------------------------


async def test_create_pool_against_a_closed_port_names_database_url() -> None:
    dsn = f"postgresql://whytree:s3cret-pw@127.0.0.1:{_closed_port()}/whytree"
    with pytest.raises(StoreError) as info:
        await create_pool(dsn, connect_timeout=5)
    assert "DATABASE_URL" in str(info.value)
    assert "s3cret-pw" not in str(info.value)


async def test_stores_on_an_unreachable_server_raise_store_error() -> None:
    dsn = f"postgresql://whytree:s3cret-pw@127.0.0.1:{_closed_port()}/whytree"
    pool = await create_pool(dsn, min_size=0, max_size=1, connect_timeout=5)  # connects lazily
    try:
        with pytest.raises(StoreError, match="unreachable") as info:
            await PgUserStore(pool).touch(1)
        assert "s3cret-pw" not in str(info.value)
        assert "DATABASE_URL" in str(info.value)
        assert isinstance(info.value.__cause__, OSError)
    finally:
        await pool.close()


async def test_stores_on_a_closed_pool_raise_store_error(database_url: str) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=1)
    await PgUserStore(pool).touch(7)
    await pool.close()
    users, sessions = PgUserStore(pool), PgSessionStore(pool)
    exchanges, clarifications = PgExchangeStore(pool), PgClarificationStore(pool)
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: users.touch(7),
        lambda: users.get(7),
        lambda: sessions.current(user_id=7, chat_id=70),
        lambda: sessions.start_new(user_id=7, chat_id=70),
        lambda: exchanges.record(_exchange(1, 1)),
        lambda: exchanges.recent(session_id=1),
        lambda: exchanges.count_for_user(7),
        lambda: clarifications.get("abcdefgh"),
        lambda: clarifications.active(70, 7),
        lambda: clarifications.cancel(70, 7),
        lambda: clarifications.close("abcdefgh"),
    ]
    for call in calls:
        with pytest.raises(StoreError, match="unreachable") as info:
            await call()
        assert not isinstance(info.value, NotFoundError)
        assert isinstance(info.value.__cause__, asyncpg.InterfaceError)
