"""TreeManager: the one way to change a hypothesis tree, every change saved at once.

A manager works on one tree at a time (`create_tree` or `load_tree` picks it).
Each mutation runs under an asyncio.Lock on a copy of the tree: validate and
change it (`reasoning_core.tree.edits`), recompute the ancestors, refresh the
synthesis, save the touched nodes and the tree meta in one transaction, and only
then make the copy current. So concurrent `set_node_result` calls from the
explorer aggregate consistently, and a failed save leaves memory and database
agreeing. Changes that queue while a save is under way are saved together by the next
caller (group commit), each still in order and each saved before its caller goes on.
Node ids: see `reasoning_core.tree.edits`.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar

from reasoning_core.errors import NotFoundError, TreeError
from reasoning_core.models import Evidence, Node, NodeType, Synthesis, Tree
from reasoning_core.ports import TreeStore
from reasoning_core.tree.aggregation import recompute_ancestors
from reasoning_core.tree.edits import (
    DEFAULT_MAX_DEPTH,
    ROOT_ID,
    NewNode,
    add_node,
    close_node,
    default_title,
    set_result,
)
from reasoning_core.tree.status import tree_status
from reasoning_core.tree.synthesis import synthesize
from reasoning_core.tree.walk import get_node, root_of

T = TypeVar("T")


def _utcnow() -> datetime:
    return datetime.now(UTC)


class TreeManager:
    """Grows, judges and concludes one persistent hypothesis tree."""

    def __init__(
        self,
        *,
        store: TreeStore,
        max_depth: int = DEFAULT_MAX_DEPTH,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self._store = store
        self._max_depth = max_depth
        self._clock = clock
        self._lock = asyncio.Lock()
        self._queue: list[_Queued[Any]] = []
        self._tree: Tree | None = None

    @property
    def tree(self) -> Tree:
        """The current tree, read-only (a TreeError before `create_tree` or `load_tree`)."""
        if self._tree is None:
            raise TreeError("no tree: call create_tree or load_tree first")
        return self._tree

    def node(self, node_id: str) -> Node:
        """A copy of one node of the current tree."""
        return get_node(self.tree, node_id).model_copy(deep=True)

    # --- whole trees ------------------------------------------------------------------

    async def create_tree(
        self, task_description: str, *, user_id: int | None = None, chat_id: int | None = None
    ) -> Tree:
        """Start a tree with the task as its root, saved before it is returned."""
        if not task_description.strip():
            raise TreeError("the task description is empty")
        now = self._clock()
        tree_id = uuid.uuid4().hex[:12]
        root = Node(
            id=ROOT_ID,
            tree_id=tree_id,
            node_type="root",
            status="in_progress",
            title=default_title(task_description),
            description=task_description.strip(),
            created_at=now,
            updated_at=now,
        )
        tree = Tree(
            id=tree_id,
            task=task_description.strip(),
            user_id=user_id,
            chat_id=chat_id,
            nodes={ROOT_ID: root},
            created_at=now,
        )
        async with self._lock:
            await self._store.create(tree)
            self._tree = tree
        return tree.model_copy(deep=True)

    async def load_tree(self, tree_id: str, *, user_id: int | None = None) -> Tree:
        """Continue a saved tree (after a restart); with user_id, only that user's tree."""
        tree = await self._store.load(tree_id)
        if user_id is not None and tree.user_id != user_id:
            raise NotFoundError(f"no tree {tree_id!r}")  # do not reveal other users' trees
        async with self._lock:
            self._tree = tree
        return tree.model_copy(deep=True)

    async def get_final_synthesis(self) -> Synthesis:
        """Conclude from the tree as it stands; the synthesis is stored on the tree."""
        return await self._apply(lambda tree: (synthesize(tree), []))

    async def finish(self, status: Literal["completed", "failed"] = "completed") -> Tree:
        """Close the analysis: the tree (and, on success, its root) leave 'active'."""

        def close(tree: Tree) -> tuple[Tree, list[str]]:
            tree.status = status
            root = root_of(tree)
            if status == "completed":
                root.status = "completed"
            return tree, [root.id]

        return await self._apply(close)

    async def begin_revision(self) -> int:
        """Count one plan revision (reflection); returns the new revision number."""

        def bump(tree: Tree) -> tuple[int, list[str]]:
            tree.revision += 1
            return tree.revision, []

        return await self._apply(bump)

    def get_status(self) -> dict[str, Any]:
        """Counts by status and type, open hypotheses, checks done, a progress line."""
        return tree_status(self.tree)

    # --- nodes ------------------------------------------------------------------------

    async def add_child(
        self,
        parent_id: str,
        description: str,
        node_type: NodeType,
        *,
        title: str | None = None,
        prior: float = 0.5,
        promise: float = 0.5,
        context: dict[str, Any] | None = None,
    ) -> Node:
        """Add a pending node under `parent_id`; TreeError says why one is refused.

        Refused: unknown, rejected or pruned parent; a type not allowed under the
        parent (root -> hypothesis -> hypothesis | verification -> leaf); the depth
        limit; an empty description; a prior outside 0..1; an active sibling with
        the same description (ignoring case, spacing and trailing punctuation).
        """
        new = NewNode(
            parent_id, description, node_type, title, prior, promise, dict(context or {})
        )
        return await self._apply(
            lambda tree: add_node(tree, new, max_depth=self._max_depth, now=self._clock())
        )

    async def add_children(self, new: Sequence[NewNode]) -> list[Node | TreeError]:
        """`add_child` for several nodes in one change (one save); each one is added or
        refused (its TreeError in its place) on its own, in order."""

        def add(tree: Tree) -> tuple[list[Node | TreeError], list[str]]:
            added: list[Node | TreeError] = []
            touched: list[str] = []
            for one in new:
                try:
                    node, ids = add_node(tree, one, max_depth=self._max_depth, now=self._clock())
                except TreeError as e:
                    added.append(e)
                    continue
                added.append(node)
                touched += ids
            return added, touched

        return await self._apply(add)

    async def set_node_result(self, node_id: str, result: Evidence) -> Node:
        """Record what a check found, mark it completed and aggregate upward.

        A result may be set again (a retried check); rejected or pruned nodes and
        hypotheses (which are aggregated, not judged) are refused with a TreeError.
        """
        return await self._apply(lambda tree: set_result(tree, node_id, result))

    async def set_node_results(self, results: Sequence[tuple[str, Evidence]]) -> list[Node]:
        """`set_node_result` for several checks in one change (one save): all or none."""

        def record(tree: Tree) -> tuple[list[Node], list[str]]:
            nodes, touched = [], []
            for node_id, result in results:
                node, ids = set_result(tree, node_id, result)
                nodes.append(node)
                touched += ids
            return nodes, touched

        return await self._apply(record)

    async def reject_node(self, node_id: str, reason: str) -> Node:
        """Reject a node (kept, with the reason); its open descendants are pruned."""
        return await self._apply(lambda tree: close_node(tree, node_id, "rejected", reason))

    async def prune_node(self, node_id: str, reason: str) -> Node:
        """Prune a node the explorer will not pursue; its open descendants too."""
        return await self._apply(lambda tree: close_node(tree, node_id, "pruned", reason))

    async def aggregate_upward(self, node_id: str) -> list[str]:
        """Recompute a node and its ancestors; returns their ids, bottom-up."""

        def recompute(tree: Tree) -> tuple[list[str], list[str]]:
            ids = recompute_ancestors(tree, node_id)
            return ids, ids

        return await self._apply(recompute)

    # --- internals --------------------------------------------------------------------

    async def _apply(self, change: Callable[[Tree], tuple[T, list[str]]]) -> T:
        """Run `change` on a copy, refresh the synthesis, save, then make it current.

        `change` returns a value and the ids of the nodes it touched. Changes that queue
        up while a save is under way are saved together, in order, by the next caller
        to get the lock (group commit): when the four hypotheses of an analysis record
        their checks at once, the last one waits for two saves instead of four.
        """
        queued = _Queued(change)
        self._queue.append(queued)
        try:
            async with self._lock:
                if not queued.done.done():
                    batch, self._queue = self._queue, []
                    try:
                        await self._write(batch)
                    except asyncio.CancelledError:  # the others' changes wait for the next
                        self._queue[:0] = [
                            q for q in batch if q is not queued and not q.done.done()
                        ]
                        if queued.done.done():  # refused before the save: seen, not raised
                            queued.done.exception()
                        raise
        except asyncio.CancelledError:
            if queued in self._queue:  # never written: it never happened
                self._queue.remove(queued)
            raise
        return copy.deepcopy(queued.done.result())  # callers must not alias the live tree

    async def _write(self, batch: list[_Queued[Any]]) -> None:
        """Apply each change of `batch` in order (one that raises fails alone), save them
        in one transaction, make the result current and settle each change's future."""
        draft = self.tree
        applied: list[tuple[_Queued[Any], Any]] = []
        touched: list[str] = []
        for queued in batch:
            attempt = _draft_of(draft)
            try:
                value, ids = queued.change(attempt)
            except Exception as e:  # a refused change (TreeError): only it fails
                queued.done.set_exception(e)
                continue
            draft = attempt
            applied.append((queued, value))
            touched += ids
        if not applied:
            return
        ids = list(dict.fromkeys(touched))
        now = self._clock()
        for node_id in ids:
            draft.nodes[node_id].updated_at = now
        draft.synthesis = synthesize(draft)
        try:
            await self._store.save_changes(draft, ids)
        except Exception as e:  # nothing of the batch is current: each change fails
            for queued, _ in applied:
                queued.done.set_exception(e)
            return
        self._tree = draft
        for queued, value in applied:
            queued.done.set_result(value)


@dataclass(eq=False)
class _Queued(Generic[T]):
    """A change waiting to be saved, and the future its caller reads the value from."""

    change: Callable[[Tree], tuple[T, list[str]]]
    done: asyncio.Future[T] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


def _draft_of(tree: Tree) -> Tree:
    """A copy of `tree` that a change may edit: a new object for the tree and for every
    node, sharing their field values. Changes only ever assign node fields (status,
    confidence, result, ...) and add nodes, never edit a value in place, so this keeps
    the current tree as it was at a fraction of a deep copy's cost, which matters: every
    change of a growing tree makes one, under the lock, on the analysis' critical path."""
    nodes = {node_id: node.model_copy() for node_id, node in tree.nodes.items()}
    return tree.model_copy(update={"nodes": nodes})
