"""The analysis page's tables: the reflection journal and the capability links (hashes)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from reasoning_core.errors import NotFoundError
from reasoning_core.ports import TreeEvent
from storage.tree_pages import PgTreeJournal, PgTreeLinkStore
from storage.trees import PgTreeStore
from tests.storage.test_trees import make_tree

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


async def test_the_journal_keeps_events_in_order(pool: asyncpg.Pool[Any]) -> None:
    await PgTreeStore(pool).create(make_tree("t1"))
    journal = PgTreeJournal(pool)
    for index in range(3):
        await journal.record(
            "t1", TreeEvent(kind="reflection", message=f"r{index}", data={"i": index})
        )
    await journal.record("t1", TreeEvent(kind="plan_revised", message="revised"))
    events = await journal.events("t1")
    assert [(e.kind, e.message) for e in events] == [
        *(("reflection", f"r{i}") for i in range(3)),
        ("plan_revised", "revised"),
    ]
    assert events[1].data == {"i": 1} and all(e.created_at is not None for e in events)
    assert await journal.events("unknown") == []
    with pytest.raises(NotFoundError):
        await journal.record("unknown", TreeEvent(kind="reflection"))


async def test_a_link_opens_its_tree_until_it_expires_or_is_revoked(
    pool: asyncpg.Pool[Any],
) -> None:
    await PgTreeStore(pool).create(make_tree("t1"))
    links = PgTreeLinkStore(pool)
    await links.add(tree_id="t1", token_hash=digest("a"), expires_at=NOW + timedelta(hours=1))
    await links.add(tree_id="t1", token_hash=digest("b"), expires_at=NOW + timedelta(hours=2))
    assert await links.tree_of(digest("a"), now=NOW) == "t1"
    assert await links.tree_of(digest("wrong"), now=NOW) is None
    assert await links.tree_of(digest("a"), now=NOW + timedelta(hours=1)) is None  # expired
    assert await links.tree_of(digest("b"), now=NOW + timedelta(hours=1)) == "t1"
    assert await links.revoke("t1", now=NOW) == 2
    assert await links.tree_of(digest("b"), now=NOW) is None
    assert await links.revoke("t1", now=NOW) == 0
    stored = await pool.fetch("SELECT token_hash FROM tree_links")
    assert sorted(bytes(r["token_hash"]) for r in stored) == sorted([digest("a"), digest("b")])


async def test_a_link_needs_its_tree_and_goes_with_it(pool: asyncpg.Pool[Any]) -> None:
    links = PgTreeLinkStore(pool)
    with pytest.raises(NotFoundError):
        await links.add(tree_id="nope", token_hash=digest("x"), expires_at=NOW)
    await PgTreeStore(pool).create(make_tree("t2"))
    await links.add(tree_id="t2", token_hash=digest("x"), expires_at=NOW + timedelta(days=1))
    await pool.execute("DELETE FROM trees WHERE id = 't2'")
    assert await links.tree_of(digest("x"), now=NOW) is None
