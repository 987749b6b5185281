"""Progress of a tree in numbers and one line ("3/7 checks · 2 hypotheses open")."""

from __future__ import annotations

from collections import Counter
from typing import Any

from reasoning_core.models import Node, Tree
from reasoning_core.tree.aggregation import EVIDENCE_TYPES
from reasoning_core.tree.walk import OPEN, descendants, is_active
from reasoning_core.tree.words import progress_line


def is_open_hypothesis(tree: Tree, node: Node) -> bool:
    """An active hypothesis with a check still to run, or with no checks yet."""
    if node.node_type != "hypothesis" or not is_active(node):
        return False
    checks = [
        n for n in descendants(tree, node.id) if is_active(n) and n.node_type in EVIDENCE_TYPES
    ]
    return not checks or any(c.status in OPEN for c in checks)


def tree_status(tree: Tree) -> dict[str, Any]:
    """Counts by status and type, checks done of total, open hypotheses, the leader.

    A check is a verification node; rejected checks count as done (they ended),
    pruned ones are left out of the total (they will not run).
    """
    nodes = list(tree.nodes.values())
    checks = [n for n in nodes if n.node_type == "verification" and n.status != "pruned"]
    done = sum(1 for n in checks if n.status in ("completed", "rejected"))
    open_hypotheses = sum(1 for n in nodes if is_open_hypothesis(tree, n))
    synthesis = tree.synthesis
    return {
        "tree_id": tree.id,
        "status": tree.status,
        "revision": tree.revision,
        "nodes": len(nodes),
        "by_status": dict(Counter(n.status for n in nodes)),
        "by_type": dict(Counter(n.node_type for n in nodes)),
        "checks_total": len(checks),
        "checks_done": done,
        "hypotheses_open": open_hypotheses,
        "primary": None if synthesis is None else synthesis.primary.title,
        "confidence": None if synthesis is None else synthesis.confidence,
        "progress": progress_line(done, len(checks), open_hypotheses, "en"),
    }
