"""Which nodes a big tree's picture draws: the rest is folded into "+N more" boxes.

Up to `max_nodes` nodes are drawn, breadth-first from the root; each node shows
at most `max_children` children. Children are chosen winning path first, then
active before rejected, then by confidence; they keep their creation order in
the picture. The children left out of a drawn node become one fold that says
how many nodes it hides and their verdicts.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from reasoning_core import Node

#: Nodes drawn at most; a 40-node tree is drawn whole.
MAX_NODES = 80
#: Children drawn under one node at most.
MAX_CHILDREN = 12


@dataclass(frozen=True, slots=True)
class Fold:
    """The children of `parent_id` left out of the picture."""

    parent_id: str
    hidden: int
    verdicts: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True, slots=True)
class Folded:
    drawn: list[str]
    folds: list[Fold]


def fold(
    root: Node,
    kids: dict[str, list[Node]],
    *,
    rank: Callable[[Node], tuple[float, ...]],
    verdict: Callable[[Node], str],
    max_nodes: int = MAX_NODES,
    max_children: int = MAX_CHILDREN,
) -> Folded:
    """The nodes to draw (root first) and the folds; `rank` orders children (lowest first)."""
    drawn, folds = [root.id], []
    budget = max(0, max_nodes - 1)
    queue = deque([root])
    while queue:
        node = queue.popleft()
        children = kids.get(node.id, [])
        if not children:
            continue
        take = min(max_children, budget, len(children))
        chosen = {c.id for c in sorted(children, key=rank)[:take]}
        budget -= take
        shown = [c for c in children if c.id in chosen]
        drawn.extend(c.id for c in shown)
        queue.extend(shown)
        left = [c for c in children if c.id not in chosen]
        if left:
            hidden = sum(_size(c, kids) for c in left)
            folds.append(Fold(node.id, hidden, Counter(verdict(c) for c in left)))
    return Folded(drawn, folds)


def _size(node: Node, kids: dict[str, list[Node]]) -> int:
    """The node and everything under it."""
    count, stack = 0, [node]
    while stack:
        current = stack.pop()
        count += 1
        stack.extend(kids.get(current.id, []))
    return count
