"""The oracle of the incremental aggregation: every node recomputed bottom-up.

The product recomputes only a changed node's ancestors (`recompute_ancestors`); the
tests check that doing so always agrees with recomputing the whole tree.
"""

from __future__ import annotations

from reasoning_core.models import Node, Tree
from reasoning_core.tree.aggregation import node_confidence
from reasoning_core.tree.walk import children, root_of


def recompute_all(tree: Tree) -> None:
    """Recompute every node of `tree` in place, bottom-up."""
    _recompute_below(tree, root_of(tree))


def _recompute_below(tree: Tree, node: Node) -> None:
    for child in children(tree, node.id):
        _recompute_below(tree, child)
    node.confidence = node_confidence(tree, node)
