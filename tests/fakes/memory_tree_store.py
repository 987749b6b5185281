"""InMemoryTreeStore: a `TreeStore` in a dict, for fast pure unit and property tests.

Everything that touches persistence is tested against `PgTreeStore` on real
PostgreSQL; this double only lets tests of the tree logic run thousands of
examples quickly. It stores deep copies, so callers cannot alias saved state.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection
from datetime import UTC, datetime

from reasoning_core.errors import NotFoundError, StoreError
from reasoning_core.models import Node, Tree
from reasoning_core.ports import TreeSummary


class InMemoryTreeStore:
    """Trees by id; `saves` counts write calls so tests can see that changes were saved."""

    def __init__(self) -> None:
        self._trees: dict[str, Tree] = {}
        self.saves = 0

    async def create(self, tree: Tree) -> None:
        if tree.id in self._trees:
            raise StoreError(f"a tree with id {tree.id!r} already exists")
        stored = tree.model_copy(deep=True)
        stored.created_at = stored.created_at or datetime.now(UTC)
        self._trees[tree.id] = stored
        self.saves += 1

    async def save_node(self, node: Node) -> None:
        self._get(node.tree_id).nodes[node.id] = node.model_copy(deep=True)
        self.saves += 1

    async def save_tree_meta(self, tree: Tree) -> None:
        stored = self._get(tree.id)
        stored.status, stored.revision = tree.status, tree.revision
        stored.synthesis = None if tree.synthesis is None else tree.synthesis.model_copy(deep=True)
        self.saves += 1

    async def save_changes(self, tree: Tree, node_ids: Collection[str]) -> None:
        await self.save_tree_meta(tree)
        for node_id in node_ids:
            await self.save_node(tree.nodes[node_id])

    async def load(self, tree_id: str) -> Tree:
        return self._get(tree_id).model_copy(deep=True)

    async def list(
        self, user_id: int | None = None, limit: int = 20
    ) -> builtins.list[TreeSummary]:
        trees = [t for t in self._trees.values() if user_id is None or t.user_id == user_id]
        trees.sort(key=lambda t: t.created_at or datetime.min.replace(tzinfo=UTC), reverse=True)
        return [
            TreeSummary(
                id=t.id,
                task=t.task,
                status=t.status,
                primary_title=None if t.synthesis is None else t.synthesis.primary.title,
                confidence=None if t.synthesis is None else t.synthesis.confidence,
                created_at=t.created_at or datetime.now(UTC),
            )
            for t in trees[:limit]
        ]

    def _get(self, tree_id: str) -> Tree:
        tree = self._trees.get(tree_id)
        if tree is None:
            raise NotFoundError(f"no tree {tree_id!r}")
        return tree
