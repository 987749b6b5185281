"""How each node of a tree is shown: its verdict, whether it is greyed, the winning path.

Pure functions of a `Tree`, shared by the picture and the analysis page so both
say the same thing. The verdict follows the text view's marks
(`reasoning_core.node_mark`), so all three views agree.
"""

from __future__ import annotations

from typing import Literal

from reasoning_core import (
    CONFIRMED,
    INCONCLUSIVE,
    OPEN_MARK,
    REFUTED,
    Node,
    Tree,
    ancestors,
    descendants,
    gettext,
    is_active,
    node_mark,
    pgettext,
)

Verdict = Literal["confirmed", "refuted", "inconclusive", "rejected", "not_run"]
VERDICTS: tuple[Verdict, ...] = ("confirmed", "refuted", "inconclusive", "rejected", "not_run")

_BY_MARK: dict[str, Verdict] = {
    CONFIRMED: "confirmed",
    REFUTED: "refuted",
    INCONCLUSIVE: "inconclusive",
    OPEN_MARK: "not_run",
}


def verdict_of(tree: Tree, node: Node) -> Verdict:
    """confirmed / refuted / inconclusive / rejected / not run (open or pruned)."""
    if node.status == "rejected":
        return "rejected"
    if node.status == "pruned":
        return "not_run"
    return _BY_MARK.get(node_mark(tree, node), "inconclusive")


def verdict_word(verdict: str, language: str) -> str:
    """The verdict in words, in Russian or English."""
    words = {
        "confirmed": gettext(language, "confirmed"),
        "refuted": gettext(language, "refuted"),
        "inconclusive": pgettext(language, "tree verdict", "inconclusive"),
        "rejected": pgettext(language, "tree verdict", "rejected"),
        "not_run": pgettext(language, "tree verdict", "not run"),
    }
    return words.get(verdict, verdict)


def child_index(tree: Tree) -> dict[str, list[Node]]:
    """Children of every node in creation order, built once (`walk.children` scans the tree)."""
    index: dict[str, list[Node]] = {node_id: [] for node_id in tree.nodes}
    for node in tree.nodes.values():
        if node.parent_id is not None and node.parent_id in index:
            index[node.parent_id].append(node)
    return index


def greyed(tree: Tree, kids: dict[str, list[Node]]) -> set[str]:
    """Ids of nodes that count for nothing: rejected or pruned, and everything under them."""
    out: set[str] = set()
    stack = [n for n in tree.nodes.values() if not is_active(n)]
    while stack:
        node = stack.pop()
        if node.id not in out:
            out.add(node.id)
            stack.extend(kids.get(node.id, []))
    return out


def winning_path(tree: Tree) -> set[str]:
    """The root, the primary hypothesis, and below it every confirmed node whose parent is
    on the path (sub-hypotheses that hold and the checks that confirmed them).

    Empty while there is no conclusion, or when the cause was not established.
    """
    synthesis = tree.synthesis
    if synthesis is None or synthesis.not_established:
        return set()
    primary = tree.nodes.get(synthesis.primary.node_id or "")
    if primary is None or not is_active(primary):
        return set()
    path = {primary.id, *(n.id for n in ancestors(tree, primary.id))}
    for node in descendants(tree, primary.id):  # parents come before their children
        if node.parent_id in path and is_active(node) and verdict_of(tree, node) == "confirmed":
            path.add(node.id)
    return path


def shown_confidence(node: Node) -> float | None:
    """The node's confidence; a hypothesis without one shows its prior, a check nothing."""
    if node.confidence is not None:
        return node.confidence
    return node.prior if node.node_type in ("root", "hypothesis") else None


def key_number(node: Node) -> str:
    """A check's finding in its own words ("availability 0% vs 100%, 44 h"), or ""."""
    if node.node_type in ("verification", "leaf") and node.result is not None:
        return node.result.text
    return ""


def node_anchors(tree: Tree) -> dict[str, str]:
    """A safe HTML id per node ("node-0", "node-1", ... in creation order): node ids are
    data, so they never become markup."""
    return {node_id: f"node-{index}" for index, node_id in enumerate(tree.nodes)}
