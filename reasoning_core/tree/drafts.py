"""DraftStore: a `TreeStore` that keeps nothing, for a model's scratch tree.

A planner that lets a model grow a tree through `hypothesis_tree_action` (planners/agent)
gives it a draft: the model adds and judges nodes there, the planner reads what it
added and hands it to the explorer, which grows the analysis's real, saved tree. The
draft lives only in its `TreeManager` (which holds the current tree itself), so it
never shows among a user's trees and costs no writes.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection

from reasoning_core.errors import NotFoundError
from reasoning_core.models import Node, Tree
from reasoning_core.ports import TreeSummary


class DraftStore:
    """Accepts every write and forgets it; a draft cannot be loaded again."""

    async def create(self, tree: Tree) -> None:
        """Nothing to write: the manager holds the draft."""

    async def save_node(self, node: Node) -> None:
        """Nothing to write: the manager holds the draft."""

    async def save_tree_meta(self, tree: Tree) -> None:
        """Nothing to write: the manager holds the draft."""

    async def save_changes(self, tree: Tree, node_ids: Collection[str]) -> None:
        """Nothing to write: the manager holds the draft."""

    async def load(self, tree_id: str) -> Tree:
        """Always NotFoundError: a draft is never read back."""
        raise NotFoundError(f"no tree {tree_id!r}")

    async def list(
        self, user_id: int | None = None, limit: int = 20
    ) -> builtins.list[TreeSummary]:
        """No drafts are listed."""
        return []
