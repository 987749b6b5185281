"""The hypothesis-tree store."""

from __future__ import annotations

import builtins
from collections.abc import Collection
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, Field

from reasoning_core.models import (
    Node,
    Tree,
)


class TreeSummary(BaseModel):
    """One line of a tree listing: what was asked and where the analysis stands."""

    id: str
    task: str
    status: str
    primary_title: str | None = None
    confidence: float | None = None
    created_at: datetime


class TreeStore(Protocol):
    """Persistence of hypothesis trees; every change is written at once.

    Node ids are unique within their tree (not globally): nodes are keyed by
    (tree_id, id). Raises only `StoreError` subclasses.
    """

    async def create(self, tree: Tree) -> None:
        """Insert a new tree and the nodes it already has (normally just the root)."""
        ...

    async def save_node(self, node: Node) -> None:
        """Insert or update one node (its tree must exist, else NotFoundError)."""
        ...

    async def save_tree_meta(self, tree: Tree) -> None:
        """Update the tree's status, revision and synthesis (not its nodes)."""
        ...

    async def save_changes(self, tree: Tree, node_ids: Collection[str]) -> None:
        """Upsert the named nodes of `tree` and its meta in one transaction, in that order."""
        ...

    async def load(self, tree_id: str) -> Tree:
        """The tree with all its nodes in creation order; NotFoundError if unknown."""
        ...

    async def list(
        self, user_id: int | None = None, limit: int = 20
    ) -> builtins.list[TreeSummary]:
        """The newest trees first, of one user or of everyone (user_id None)."""
        ...


class TreeEvent(BaseModel):
    """One entry of an analysis's journal: a reflection, a plan revision."""

    kind: str
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime | None = None


class TreeJournal(Protocol):
    """The journal of an analysis: what reflection found and decided, in order.

    Raises only `StoreError` subclasses (`NotFoundError` for an unknown tree).
    """

    async def record(self, tree_id: str, event: TreeEvent) -> None:
        """Append one event to the tree's journal."""
        ...

    async def events(self, tree_id: str) -> builtins.list[TreeEvent]:
        """The tree's events, oldest first ([] for an unknown tree)."""
        ...
