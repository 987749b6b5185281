"""PgMemoryStore and PgProjectStore against a real PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from reasoning_core.errors import NotFoundError
from reasoning_core.ports import MemoryEntry
from storage.memory import _SEARCH, DEFAULT_SEARCH_WINDOW, PgMemoryStore, PgProjectStore
from storage.users import PgUserStore

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
ANN, BOB = 11, 22
GROUP = -100500


def _entry(
    goal: str,
    outcome: str = "",
    *,
    user_id: int = ANN,
    chat_id: int = ANN,
    project: str = "default",
    minutes: int = 0,
    **extra: Any,
) -> MemoryEntry:
    return MemoryEntry(
        user_id=user_id,
        chat_id=chat_id,
        project=project,
        goal_summary=goal,
        outcome_summary=outcome,
        strategy="deep",
        confidence=0.8,
        created_at=T0 + timedelta(minutes=minutes),
        **extra,
    )


@pytest.fixture
async def store(pool: asyncpg.Pool[Any]) -> PgMemoryStore:
    users = PgUserStore(pool)
    for user_id in (ANN, BOB):
        await users.touch(user_id)
    return PgMemoryStore(pool)


async def _goals(store: PgMemoryStore, query: str, *, top_k: int = 3, **owner: Any) -> list[str]:
    key = {"user_id": ANN, "chat_id": ANN, "project": "default", **owner}
    found = await store.search(**key, query=query, top_k=top_k)
    return [e.goal_summary for e in found]


async def test_round_trip_keeps_every_field(store: PgMemoryStore) -> None:
    written = await store.add(
        _entry(
            "Why did traffic drop on cell 12345?",
            "Interference: RTWP up 8 dB",
            tree_id="t-1",
            parameters={"cell": "12345", "since": "monday"},
        )
    )
    assert written.id is not None and written.created_at == T0
    [read] = await store.list(user_id=ANN, chat_id=ANN, project="default")
    assert read == written
    assert read.parameters == {"cell": "12345", "since": "monday"}
    assert (read.strategy, read.confidence, read.tree_id) == ("deep", 0.8, "t-1")


async def test_created_at_defaults_to_now(store: PgMemoryStore) -> None:
    entry = _entry("anything").model_copy(update={"created_at": None})
    written = await store.add(entry)
    assert written.created_at is not None
    assert abs(written.created_at - datetime.now(UTC)) < timedelta(minutes=5)


async def test_unknown_user_is_not_found(store: PgMemoryStore) -> None:
    with pytest.raises(NotFoundError):
        await store.add(_entry("x", user_id=999, chat_id=999))


async def test_russian_inflected_forms_find_each_other(store: PgMemoryStore) -> None:
    await store.add(_entry("Почему упал трафик на соте 40211?", "Авария: сота была недоступна"))
    await store.add(_entry("Ошибки 5xx в сервисе billing", "Плохой релиз", minutes=1))
    await store.add(_entry("Как настроить резервное копирование", "pg_basebackup", minutes=2))
    for query in ("сота", "соты", "соте", "проверь соту ещё раз"):
        assert (await _goals(store, query, top_k=1)) == ["Почему упал трафик на соте 40211?"]
    assert (await _goals(store, "ошибка в сервисах", top_k=1)) == ["Ошибки 5xx в сервисе billing"]


async def test_english_stems_and_partial_overlap(store: PgMemoryStore) -> None:
    await store.add(_entry("Why did checkout latency spike?", "Connection pool exhausted"))
    await store.add(
        _entry("Traffic dropped on cell 12345", "Neighbour cell took traffic", minutes=1)
    )
    await store.add(_entry("Disk filling up on db-01", "WAL archiving stuck", minutes=2))
    assert (await _goals(store, "latencies spiking in checkout", top_k=1)) == [
        "Why did checkout latency spike?"
    ]
    assert (await _goals(store, "what about the wal archive", top_k=1)) == [
        "Disk filling up on db-01"
    ]
    # A cell id typed alone matches the entry that named it.
    assert (await _goals(store, "12345", top_k=1)) == ["Traffic dropped on cell 12345"]


async def test_rank_first_then_recency(store: PgMemoryStore) -> None:
    await store.add(_entry("traffic drop on cell 1 explained", minutes=0))
    await store.add(_entry("traffic drop on cell 2 explained", minutes=5))
    await store.add(_entry("unrelated backup question", minutes=10))
    await store.add(_entry("traffic drop traffic drop cell 3", "traffic drop again", minutes=1))
    goals = await _goals(store, "traffic drop", top_k=3)
    assert goals[0] == "traffic drop traffic drop cell 3", "the best match wins over newer"
    # Equal rank: the newer entry first.
    assert goals[1:] == ["traffic drop on cell 2 explained", "traffic drop on cell 1 explained"]


async def test_query_without_words_falls_back_to_recency(store: PgMemoryStore) -> None:
    for minute in range(4):
        await store.add(_entry(f"question number {minute}", minutes=minute))
    for query in ("", "   ", "?!", "the and of"):
        assert await _goals(store, query, top_k=2) == ["question number 3", "question number 2"]


async def test_no_match_returns_nothing(store: PgMemoryStore) -> None:
    await store.add(_entry("traffic on cell 12345"))
    assert await _goals(store, "kubernetes certificates") == []


async def test_users_chats_and_projects_never_mix(store: PgMemoryStore) -> None:
    await store.add(_entry("ann private cell 777"))
    await store.add(_entry("ann in the group cell 777", chat_id=GROUP))
    await store.add(_entry("bob in the group cell 777", user_id=BOB, chat_id=GROUP))
    await store.add(_entry("ann project radio cell 777", project="radio"))
    assert await _goals(store, "cell 777") == ["ann private cell 777"]
    assert await _goals(store, "cell 777", chat_id=GROUP) == ["ann in the group cell 777"]
    assert await _goals(store, "cell 777", user_id=BOB, chat_id=GROUP) == [
        "bob in the group cell 777"
    ]
    assert await _goals(store, "cell 777", project="radio") == ["ann project radio cell 777"]
    assert await _goals(store, "cell 777", user_id=BOB, chat_id=BOB) == []
    listed = await store.list(user_id=BOB, chat_id=GROUP, project="default")
    assert [e.goal_summary for e in listed] == ["bob in the group cell 777"]


async def test_delete_only_the_owners_entry(store: PgMemoryStore, pool: asyncpg.Pool[Any]) -> None:
    mine = await store.add(_entry("ann's entry"))
    assert mine.id is not None
    assert await store.delete(user_id=BOB, entry_id=mine.id) is False
    assert await pool.fetchval("SELECT count(*) FROM memories WHERE id = $1", mine.id) == 1
    assert await store.delete(user_id=ANN, entry_id=mine.id) is True
    assert await store.delete(user_id=ANN, entry_id=mine.id) is False
    assert await pool.fetchval("SELECT count(*) FROM memories") == 0


async def test_forget_all_deletes_the_rows_of_one_owner(
    store: PgMemoryStore, pool: asyncpg.Pool[Any]
) -> None:
    for n in range(3):
        await store.add(_entry(f"ann {n}", minutes=n))
    await store.add(_entry("ann other project", project="radio"))
    await store.add(_entry("bob", user_id=BOB, chat_id=BOB))
    assert await store.forget_all(user_id=ANN, chat_id=ANN, project="default") == 3
    assert await store.forget_all(user_id=ANN, chat_id=ANN, project="default") == 0
    rows = await pool.fetch("SELECT user_id, project FROM memories ORDER BY id")
    assert [(r["user_id"], r["project"]) for r in rows] == [(ANN, "radio"), (BOB, "default")]
    assert await store.count(user_id=ANN, chat_id=ANN, project="default") == 0


async def test_recent_list_and_count_are_newest_first(store: PgMemoryStore) -> None:
    for n in range(5):
        await store.add(_entry(f"entry {n}", minutes=n))
    recent = await store.recent(user_id=ANN, chat_id=ANN, project="default", limit=2)
    assert [e.goal_summary for e in recent] == ["entry 4", "entry 3"]
    page = await store.list(user_id=ANN, chat_id=ANN, project="default", limit=2, offset=2)
    assert [e.goal_summary for e in page] == ["entry 2", "entry 1"]
    assert await store.count(user_id=ANN, chat_id=ANN, project="default") == 5


async def test_purge_older_than_removes_only_old_rows(store: PgMemoryStore) -> None:
    old = _entry("old").model_copy(update={"created_at": datetime.now(UTC) - timedelta(days=40)})
    await store.add(old)
    await store.add(_entry("new").model_copy(update={"created_at": datetime.now(UTC)}))
    assert await store.purge_older_than(30) == 1
    listed = await store.list(user_id=ANN, chat_id=ANN, project="default")
    assert [e.goal_summary for e in listed] == ["new"]


async def test_search_window_bounds_the_ranked_slice(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(ANN)
    store = PgMemoryStore(pool, search_window=2)
    await store.add(_entry("kafka lag on orders", minutes=0))
    await store.add(_entry("unrelated one", minutes=1))
    await store.add(_entry("unrelated two", minutes=2))
    assert await _goals(store, "kafka lag") == [], "only the newest two are ranked"


async def test_search_uses_the_owner_index(store: PgMemoryStore, pool: asyncpg.Pool[Any]) -> None:
    await pool.execute(
        """INSERT INTO users (id) SELECT g FROM generate_series(1000, 1199) g""",
    )
    await pool.execute(
        """INSERT INTO memories (user_id, chat_id, goal_summary, strategy, confidence)
           SELECT 1000 + g % 200, 1000 + g % 200, 'traffic drop on cell ' || g, 'deep', 0.5
           FROM generate_series(1, 20000) g"""
    )
    await pool.execute("ANALYZE memories")
    args = (ANN, ANN, "default", "traffic drop", 3, DEFAULT_SEARCH_WINDOW)
    plan = "\n".join(r[0] for r in await pool.fetch("EXPLAIN " + _SEARCH, *args))
    assert "memories_owner_time" in plan
    assert "Seq Scan on memories" not in plan


# --- projects ----------------------------------------------------------------------


async def test_project_defaults_then_set_and_reset(store: PgMemoryStore, pool: Any) -> None:
    projects = PgProjectStore(pool)
    assert await projects.get(user_id=ANN, chat_id=ANN) == "default"
    await projects.set(user_id=ANN, chat_id=ANN, project="radio")
    await projects.set(user_id=ANN, chat_id=GROUP, project="core")
    assert await projects.get(user_id=ANN, chat_id=ANN) == "radio"
    assert await projects.get(user_id=ANN, chat_id=GROUP) == "core"
    assert await projects.get(user_id=BOB, chat_id=GROUP) == "default"
    await projects.set(user_id=ANN, chat_id=ANN, project="default")
    assert await projects.get(user_id=ANN, chat_id=ANN) == "default"
