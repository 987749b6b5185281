"""Pure, validated edits of a `Tree` in memory; `TreeManager` saves them.

Each edit returns the node it acted on and the ids of every node it touched
(including the ancestors it recomputed), so the caller knows what to save.
Refusals are `TreeError`s whose messages can be shown to a model or a user.

Node ids are short and unique within their tree, and say where a node sits:
``root``; hypotheses under the root ``h1``, ``h2``; below another node the
parent's id, a dot, a type letter and a number: ``h1.h1`` (sub-hypothesis),
``h1.v2`` (check), ``h1.v2.l1`` (leaf). Numbers are never reused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from reasoning_core.errors import TreeError
from reasoning_core.models import Evidence, Node, NodeType, Tree
from reasoning_core.tree.aggregation import EVIDENCE_TYPES, recompute_ancestors
from reasoning_core.tree.labels import shorten
from reasoning_core.tree.walk import OPEN, children, descendants, get_node, is_active

#: Which node types may hang under which.
ALLOWED_CHILDREN: dict[NodeType, frozenset[NodeType]] = {
    "root": frozenset({"hypothesis"}),
    "hypothesis": frozenset({"hypothesis", "verification"}),
    "verification": frozenset({"leaf"}),
    "leaf": frozenset(),
}
#: Deepest node allowed (root = 0); the explorer's own budget is usually tighter.
DEFAULT_MAX_DEPTH = 5
ROOT_ID = "root"
_LETTER: dict[NodeType, str] = {"hypothesis": "h", "verification": "v", "leaf": "l"}
_TITLE_MAX = 80

Edit = tuple[Node, list[str]]


@dataclass(frozen=True, slots=True)
class NewNode:
    """What a caller asks to add under a parent."""

    parent_id: str
    description: str
    node_type: NodeType
    title: str | None = None
    prior: float = 0.5
    promise: float = 0.5
    context: dict[str, Any] = field(default_factory=dict)


def normalise(text: str) -> str:
    """Case, spacing and trailing punctuation do not make a description new."""
    return re.sub(r"\s+", " ", text).strip().rstrip(".!?;:, ").casefold()


def default_title(description: str) -> str:
    """The first line of a description, shortened by whole words to a display length."""
    lines = description.strip().splitlines()
    line = lines[0].strip() if lines else ""
    return shorten(line, _TITLE_MAX)


def active_node(tree: Tree, node_id: str) -> Node:
    """The node, if it exists and is neither rejected nor pruned."""
    node = get_node(tree, node_id)
    if not is_active(node):
        why = f": {node.rejection_reason}" if node.rejection_reason else ""
        raise TreeError(f"node {node_id!r} is {node.status}{why}")
    return node


def add_node(tree: Tree, new: NewNode, *, max_depth: int, now: datetime) -> Edit:
    """Validate and add a pending node, then recompute its ancestors."""
    parent = _check_placement(tree, new, max_depth)
    _check_content(tree, new)
    node = Node(
        id=_new_id(tree, parent, new.node_type),
        tree_id=tree.id,
        parent_id=parent.id,
        node_type=new.node_type,
        title=(new.title or "").strip() or default_title(new.description),
        description=new.description.strip(),
        depth=parent.depth + 1,
        prior=new.prior,
        promise=new.promise,
        context=dict(new.context),
        created_at=now,
        updated_at=now,
    )
    tree.nodes[node.id] = node
    return node, recompute_ancestors(tree, node.id)


def set_result(tree: Tree, node_id: str, result: Evidence) -> Edit:
    """Record a check's result, mark it completed, recompute its ancestors."""
    node = active_node(tree, node_id)
    if node.node_type not in EVIDENCE_TYPES:
        raise TreeError(
            f"node {node_id!r} is a {node.node_type}: results go on verification "
            "or leaf nodes, hypotheses are aggregated from them"
        )
    node.result = result
    node.status = "completed"
    return node, recompute_ancestors(tree, node.id)


def close_node(
    tree: Tree, node_id: str, status: Literal["rejected", "pruned"], reason: str
) -> Edit:
    """Reject or prune a node (kept, with its reason); its open descendants are pruned."""
    node = active_node(tree, node_id)
    if node.node_type == "root":
        raise TreeError("the root cannot be rejected or pruned")
    node.status = status
    node.rejection_reason = reason.strip() or f"{status} without a reason"
    touched = [node.id]
    for below in descendants(tree, node_id):
        if below.status in OPEN:
            below.status = "pruned"
            below.rejection_reason = f"{node_id} was {status}: {node.rejection_reason}"
            touched.append(below.id)
    return node, touched + recompute_ancestors(tree, node_id)


def _check_placement(tree: Tree, new: NewNode, max_depth: int) -> Node:
    parent = active_node(tree, new.parent_id)
    allowed = ALLOWED_CHILDREN[parent.node_type]
    if new.node_type not in allowed:
        names = ", ".join(sorted(allowed)) or "nothing"
        raise TreeError(
            f"a {new.node_type} cannot go under the {parent.node_type} {parent.id!r} "
            f"(allowed: {names})"
        )
    if parent.depth + 1 > max_depth:
        raise TreeError(f"depth limit {max_depth} reached under {parent.id!r}")
    return parent


def _check_content(tree: Tree, new: NewNode) -> None:
    if not new.description.strip():
        raise TreeError("the description is empty")
    if not 0.0 <= new.prior <= 1.0 or new.promise < 0.0:
        raise TreeError(
            f"prior must be within 0..1 and promise >= 0 (got {new.prior}, {new.promise})"
        )
    key = normalise(new.description)
    for sibling in children(tree, new.parent_id):
        if is_active(sibling) and normalise(sibling.description) == key:
            raise TreeError(
                f"{new.parent_id!r} already has this {sibling.node_type}: {sibling.id}"
            )


def _new_id(tree: Tree, parent: Node, node_type: NodeType) -> str:
    letter = _LETTER[node_type]
    prefix = "" if parent.node_type == "root" else f"{parent.id}."
    number = 1 + sum(1 for c in children(tree, parent.id) if c.node_type == node_type)
    while f"{prefix}{letter}{number}" in tree.nodes:
        number += 1
    return f"{prefix}{letter}{number}"
