"""TreeStore: one contract for PgTreeStore (real PostgreSQL) and InMemoryTreeStore.

The in-memory store is a double for fast tree-logic tests; running the same
contract against both keeps it honest. PostgreSQL-only behaviour (a new pool
sees the same tree, JSONB round trips, cascades, constraints) follows.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from reasoning_core.errors import NotFoundError, StoreError
from reasoning_core.models import Evidence, Node, RankedHypothesis, Synthesis, Tree
from reasoning_core.ports import TreeStore
from storage.pool import create_pool
from storage.trees import PgTreeStore
from tests.fakes.memory_tree_store import InMemoryTreeStore

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def make_tree(tree_id: str, *, user_id: int | None = 7, minutes: int = 0) -> Tree:
    at = T0 + timedelta(minutes=minutes)
    root = Node(
        id="root", tree_id=tree_id, node_type="root", status="in_progress",
        description=f"why {tree_id}?", title=f"why {tree_id}?", created_at=at, updated_at=at,
    )  # fmt: skip
    return Tree(
        id=tree_id, task=f"why {tree_id}?", user_id=user_id, chat_id=70,
        nodes={"root": root}, created_at=at,
    )  # fmt: skip


def make_node(tree: Tree, node_id: str, parent_id: str, node_type: str, **fields: Any) -> Node:
    parent = tree.nodes[parent_id]
    node = Node.model_validate(
        {
            "id": node_id, "tree_id": tree.id, "parent_id": parent_id, "node_type": node_type,
            "depth": parent.depth + 1, "description": f"{node_type} {node_id}",
            "created_at": T0, "updated_at": T0, **fields,
        }
    )  # fmt: skip
    tree.nodes[node_id] = node
    return node


def synthesis(title: str, confidence: float) -> Synthesis:
    primary = RankedHypothesis(id="h1", node_id="h1", title=title, confidence=confidence)
    return Synthesis(
        primary=primary, confidence=confidence, ranking=[primary],
        evidence=["availability 61.2% (threshold 95%)"], uncertainty_reason="thin data",
    )  # fmt: skip


@pytest.fixture(params=["pg", "memory"])
def store(request: pytest.FixtureRequest) -> TreeStore:
    if request.param == "memory":
        return InMemoryTreeStore()
    return PgTreeStore(request.getfixturevalue("pool"))


class TestTreeStoreContract:
    async def test_create_then_load_returns_the_same_tree(self, store: TreeStore) -> None:
        tree = make_tree("t1")
        await store.create(tree)
        assert await store.load("t1") == tree

    async def test_saved_nodes_and_meta_come_back_in_creation_order(
        self, store: TreeStore
    ) -> None:
        tree = make_tree("t1")
        await store.create(tree)
        for i in (1, 2, 10):  # "h10" sorts before "h2" as text: order must be creation order
            await store.save_node(make_node(tree, f"h{i}", "root", "hypothesis", prior=0.3))
        check = make_node(tree, "h2.v1", "h2", "verification")
        check.result = Evidence(
            confirmed=True, confidence=0.9, has_data=True, text="61.2% < 95%",
            data={"rows": [{"dt": "2025-03-01", "avail": 61.2}], "n": 1},
        )  # fmt: skip
        check.status, check.confidence = "completed", 0.9
        check.context = {"tool": "sql", "query": "SELECT 1", "params": {"cell": "12345"}}
        tree.nodes["h2"].confidence = 0.858
        tree.status, tree.revision, tree.synthesis = "completed", 1, synthesis("Outage", 0.858)
        await store.save_changes(tree, ["h2.v1", "h2"])

        loaded = await store.load("t1")
        assert loaded == tree
        assert list(loaded.nodes) == ["root", "h1", "h2", "h10", "h2.v1"]

    async def test_save_node_updates_in_place(self, store: TreeStore) -> None:
        tree = make_tree("t1")
        await store.create(tree)
        node = make_node(tree, "h1", "root", "hypothesis")
        await store.save_node(node)
        node.status, node.rejection_reason = "rejected", "no data for that cell"
        await store.save_node(node)
        loaded = await store.load("t1")
        assert loaded.nodes["h1"].status == "rejected"
        assert loaded.nodes["h1"].rejection_reason == "no data for that cell"
        assert len(loaded.nodes) == 2

    async def test_unknown_trees_raise_not_found(self, store: TreeStore) -> None:
        with pytest.raises(NotFoundError):
            await store.load("nope")
        ghost = make_tree("ghost")
        with pytest.raises(NotFoundError):
            await store.save_tree_meta(ghost)
        with pytest.raises(NotFoundError):
            await store.save_node(ghost.nodes["root"])
        with pytest.raises(NotFoundError):
            await store.save_changes(ghost, ["root"])

    async def test_creating_the_same_id_twice_is_refused(self, store: TreeStore) -> None:
        await store.create(make_tree("t1"))
        with pytest.raises(StoreError, match="already exists"):
            await store.create(make_tree("t1"))

    async def test_list_is_newest_first_filtered_and_limited(self, store: TreeStore) -> None:
        for i in range(4):
            await store.create(make_tree(f"t{i}", user_id=7 if i != 2 else 8, minutes=i))
        done = make_tree("t1", minutes=1)
        done.status, done.synthesis = "completed", synthesis("Availability outage", 0.86)
        await store.save_tree_meta(done)

        everyone = await store.list()
        assert [s.id for s in everyone] == ["t3", "t2", "t1", "t0"]
        mine = await store.list(user_id=7, limit=2)
        assert [s.id for s in mine] == ["t3", "t1"]
        t1 = mine[1]
        assert (t1.task, t1.status, t1.primary_title) == (
            "why t1?",
            "completed",
            "Availability outage",
        )
        assert t1.confidence == pytest.approx(0.86)
        assert t1.created_at == T0 + timedelta(minutes=1)
        assert (mine[0].primary_title, mine[0].confidence) == (None, None)
        assert await store.list(user_id=99) == []


# --- PostgreSQL only -----------------------------------------------------------------


async def test_a_new_pool_sees_the_same_tree(database_url: str, pool: asyncpg.Pool[Any]) -> None:
    tree = make_tree("t1")
    await PgTreeStore(pool).create(tree)
    node = make_node(tree, "h1", "root", "hypothesis", confidence=0.7)
    tree.synthesis = synthesis("Outage", 0.7)
    await PgTreeStore(pool).save_changes(tree, ["h1"])

    other = await create_pool(database_url, min_size=1, max_size=1)
    try:
        loaded = await PgTreeStore(other).load("t1")
    finally:
        await other.close()
    assert loaded == tree
    assert loaded.nodes["h1"] == node
    assert loaded.synthesis == tree.synthesis


async def test_rows_use_jsonb_and_cascade_with_the_tree(pool: asyncpg.Pool[Any]) -> None:
    tree = make_tree("t1")
    store = PgTreeStore(pool)
    await store.create(tree)
    make_node(tree, "h1", "root", "hypothesis")
    check = make_node(tree, "h1.v1", "h1", "verification", context={"tool": "sql"})
    check.result = Evidence(confirmed=False, confidence=0.4, data={"n": 0})
    await store.save_changes(tree, ["h1", "h1.v1"])
    kinds = await pool.fetch(
        """SELECT id, jsonb_typeof(context) AS context, jsonb_typeof(result) AS result
           FROM tree_nodes WHERE tree_id = 't1' ORDER BY seq"""
    )
    assert [tuple(r) for r in kinds] == [
        ("root", "object", None),
        ("h1", "object", None),
        ("h1.v1", "object", "object"),
    ]
    assert (
        await pool.fetchval("SELECT result -> 'data' ->> 'n' FROM tree_nodes WHERE id = 'h1.v1'")
        == "0"
    )
    await pool.execute("DELETE FROM trees WHERE id = 't1'")
    assert await pool.fetchval("SELECT count(*) FROM tree_nodes") == 0


async def test_a_node_needs_an_existing_parent(pool: asyncpg.Pool[Any]) -> None:
    tree = make_tree("t1")
    store = PgTreeStore(pool)
    await store.create(tree)
    orphan = make_node(tree, "h1.v1", "root", "verification")
    orphan.parent_id = "h1"
    with pytest.raises(NotFoundError):
        await store.save_node(orphan)


async def test_a_closed_pool_is_a_store_error(database_url: str) -> None:
    closed = await create_pool(database_url, min_size=1, max_size=1)
    await closed.close()
    with pytest.raises(StoreError):
        await PgTreeStore(closed).load("t1")
