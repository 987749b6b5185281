"""Navigating a `Tree`: children, descendants, ancestors. Pure, no I/O.

Nodes keep only a parent id; trees stay small (tens of nodes), so a linear scan
per lookup is simpler than maintaining a child index that could go stale.
"""

from __future__ import annotations

from collections.abc import Iterator

from reasoning_core.errors import TreeError
from reasoning_core.models import Node, NodeStatus, Tree

#: Nodes in these states, and everything under them, count for nothing.
INACTIVE: frozenset[NodeStatus] = frozenset({"rejected", "pruned"})
#: States of work not yet done.
OPEN: frozenset[NodeStatus] = frozenset({"pending", "in_progress"})


def is_active(node: Node) -> bool:
    """Neither rejected nor pruned."""
    return node.status not in INACTIVE


#: Context key of a "because" link hypothesis (explore/because.py): its p does not feed
#: its parent's, and the synthesis reads it as the next link of its parent's chain.
LINK_KEY = "link"


def is_link(node: Node) -> bool:
    """A hypothesis about what its parent's finding waits on or comes from?"""
    return node.node_type == "hypothesis" and node.context.get(LINK_KEY) is True


def get_node(tree: Tree, node_id: str) -> Node:
    """The node, or a TreeError naming the unknown id."""
    node = tree.nodes.get(node_id)
    if node is None:
        raise TreeError(f"no node {node_id!r} in tree {tree.id}")
    return node


def children(tree: Tree, node_id: str) -> list[Node]:
    """Direct children in creation order."""
    return [n for n in tree.nodes.values() if n.parent_id == node_id]


def descendants(tree: Tree, node_id: str) -> Iterator[Node]:
    """Every node below `node_id`, depth-first, in creation order."""
    for child in children(tree, node_id):
        yield child
        yield from descendants(tree, child.id)


def ancestors(tree: Tree, node_id: str) -> list[Node]:
    """The parent chain of `node_id`, nearest first (the node itself excluded)."""
    chain: list[Node] = []
    seen = {node_id}
    parent_id = get_node(tree, node_id).parent_id
    while parent_id is not None:
        if parent_id in seen:
            raise TreeError(f"cycle through node {parent_id!r} in tree {tree.id}")
        seen.add(parent_id)
        parent = get_node(tree, parent_id)
        chain.append(parent)
        parent_id = parent.parent_id
    return chain


def root_of(tree: Tree) -> Node:
    """The single root node."""
    for node in tree.nodes.values():
        if node.node_type == "root":
            return node
    raise TreeError(f"tree {tree.id} has no root node")
