"""Hypothesis trees in PostgreSQL: the ``trees`` and ``tree_nodes`` tables.

Results, contexts and syntheses are JSONB (the pool's codec turns them into
Python objects both ways); nodes load in insertion order (``seq``).
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Sequence
from typing import Any

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from reasoning_core import Node, NotFoundError, StoreError, Tree, TreeSummary
from storage.errors import translated

_NODE_COLUMNS = (
    "tree_id, id, parent_id, node_type, status, title, description, depth, prior, promise,"
    " confidence, result, context, rejection_reason, created_at, updated_at"
)

_UPSERT_NODE = f"""
    INSERT INTO tree_nodes ({_NODE_COLUMNS})
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
            COALESCE($15, now()), COALESCE($16, now()))
    ON CONFLICT (tree_id, id) DO UPDATE SET
        parent_id = EXCLUDED.parent_id, node_type = EXCLUDED.node_type,
        status = EXCLUDED.status, title = EXCLUDED.title, description = EXCLUDED.description,
        depth = EXCLUDED.depth, prior = EXCLUDED.prior, promise = EXCLUDED.promise,
        confidence = EXCLUDED.confidence, result = EXCLUDED.result, context = EXCLUDED.context,
        rejection_reason = EXCLUDED.rejection_reason, updated_at = EXCLUDED.updated_at"""

_UPDATE_META = """
    UPDATE trees SET status = $2, revision = $3, synthesis = $4, updated_at = now()
    WHERE id = $1"""


def _node_args(node: Node) -> tuple[Any, ...]:
    result = None if node.result is None else node.result.model_dump(mode="json")
    return (
        node.tree_id,
        node.id,
        node.parent_id,
        node.node_type,
        node.status,
        node.title,
        node.description,
        node.depth,
        node.prior,
        node.promise,
        node.confidence,
        result,
        node.context,
        node.rejection_reason,
        node.created_at,
        node.updated_at,
    )


def _synthesis_json(tree: Tree) -> dict[str, Any] | None:
    return None if tree.synthesis is None else tree.synthesis.model_dump(mode="json")


def _meta_args(tree: Tree) -> tuple[Any, ...]:
    return (tree.id, tree.status, tree.revision, _synthesis_json(tree))


class PgTreeStore:
    """`TreeStore` on PostgreSQL. Each public method is one transaction at most."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("creating a tree")
    async def create(self, tree: Tree) -> None:
        """Insert the tree row and its current nodes; a duplicate id is a StoreError."""
        async with self._pool.acquire() as conn, conn.transaction():
            try:
                await conn.execute(
                    """INSERT INTO trees (id, task, user_id, chat_id, status, revision,
                                          synthesis, created_at)
                       VALUES ($1, $2, $3, $4, $5, $6, $7, COALESCE($8, now()))""",
                    tree.id,
                    tree.task,
                    tree.user_id,
                    tree.chat_id,
                    tree.status,
                    tree.revision,
                    _synthesis_json(tree),
                    tree.created_at,
                )
            except asyncpg.UniqueViolationError as e:
                raise StoreError(f"a tree with id {tree.id!r} already exists") from e
            await self._upsert(conn, list(tree.nodes.values()))

    @translated("saving a tree node")
    async def save_node(self, node: Node) -> None:
        """Insert or update one node; NotFoundError if its tree does not exist."""
        async with self._pool.acquire() as conn, conn.transaction():
            await self._upsert(conn, [node])

    @translated("saving a tree")
    async def save_tree_meta(self, tree: Tree) -> None:
        """Write status, revision and synthesis; NotFoundError if the tree does not exist."""
        status = await self._pool.execute(_UPDATE_META, *_meta_args(tree))
        if status == "UPDATE 0":
            raise NotFoundError(f"no tree {tree.id!r}")

    @translated("saving tree changes")
    async def save_changes(self, tree: Tree, node_ids: Collection[str]) -> None:
        """Upsert the named nodes (in the given order) and the meta, atomically."""
        nodes = [tree.nodes[i] for i in node_ids]
        async with self._pool.acquire() as conn, conn.transaction():
            status = await conn.execute(_UPDATE_META, *_meta_args(tree))
            if status == "UPDATE 0":
                raise NotFoundError(f"no tree {tree.id!r}")
            await self._upsert(conn, nodes)

    @translated("loading a tree")
    async def load(self, tree_id: str) -> Tree:
        """The tree with its nodes in creation order; NotFoundError if unknown."""
        async with self._pool.acquire() as conn, conn.transaction(readonly=True):
            row = await conn.fetchrow(
                """SELECT id, task, user_id, chat_id, status, revision, synthesis, created_at
                   FROM trees WHERE id = $1""",
                tree_id,
            )
            if row is None:
                raise NotFoundError(f"no tree {tree_id!r}")
            nodes = await conn.fetch(
                f"SELECT {_NODE_COLUMNS} FROM tree_nodes WHERE tree_id = $1 ORDER BY seq",
                tree_id,
            )
        # The pool's codec has decoded the JSONB columns; pydantic validates them.
        loaded = [Node.model_validate(dict(n)) for n in nodes]
        return Tree.model_validate({**dict(row), "nodes": {n.id: n for n in loaded}})

    @translated("listing trees")
    async def list(
        self, user_id: int | None = None, limit: int = 20
    ) -> builtins.list[TreeSummary]:
        """Newest first; of one user, or of everyone when user_id is None."""
        rows = await self._pool.fetch(
            """SELECT id, task, status, created_at,
                      synthesis -> 'primary' ->> 'title' AS primary_title,
                      (synthesis ->> 'confidence')::double precision AS confidence
               FROM trees
               WHERE $1::bigint IS NULL OR user_id = $1
               ORDER BY created_at DESC, id
               LIMIT $2""",
            user_id,
            limit,
        )
        return [TreeSummary.model_validate(dict(r)) for r in rows]

    @staticmethod
    async def _upsert(conn: PoolConnectionProxy[Any], nodes: Sequence[Node]) -> None:
        if nodes:
            await conn.executemany(_UPSERT_NODE, [_node_args(n) for n in nodes])
