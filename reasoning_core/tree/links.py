"""The numbers of a "because" chain: which links under a hypothesis hold, and how sure
the cause at the chain's end can be (tree/chain.py says it in words).

A link is a hypothesis about what its parent's finding waits on or comes from
(explore/because.py). Established like a cause (p at least `LINK_ESTABLISHED`, a
measuring check confirmed it), refuted when its checks spoke against it and none for it,
open otherwise: not checked here, undecided, or not yet checked — or refuted while the
finding that named it stands (the holder does wait on its disk; the disk looked fine). A
cause whose chain is open is at most `OPEN_LINK_MAX`, below medium: an effect is never
stated as the cause at 🟡 or 🟢 — and, while its links are being checked, the analysis
never stops early on it.
"""

from __future__ import annotations

from typing import Any

from reasoning_core.models import Node, Tree
from reasoning_core.tree.aggregation import measured, stored_or_computed, verdicts
from reasoning_core.tree.walk import children, is_active, is_link

#: The highest confidence of a cause whose chain ends at an open link: below medium (0.5).
OPEN_LINK_MAX = 0.45
#: Links are established like causes: p at least this, a measuring check confirmed.
LINK_ESTABLISHED = 0.5


def chain_of(tree: Tree, node: Node) -> tuple[list[Node], Node | None]:
    """(the confirmed links below `node`, deepest last; the open link it stops at, or None).
    A hypothesis of alternatives (`combine: any`) is read through the one that holds: its
    links grow under that alternative."""
    links: list[Node] = []
    current = node
    while True:
        grown = [c for c in children(tree, current.id) if is_link(c)]
        if not grown and not links and (held := _held_alternative(tree, current)) is not None:
            current = held
            continue
        confirmed = [c for c in grown if established(tree, c)]
        if confirmed:
            current = max(confirmed, key=lambda c: stored_or_computed(tree, c))
            links.append(current)
            continue
        # A link whose finding named a fact ("the holder waits on IO WALSync") stays open
        # when its checks refute what was supposed of it: the wait is still there. A link
        # that only asks (`required` false) never holds its parent open.
        unsettled = [
            c
            for c in grown
            if link_note(c).get("required", True)
            and (not refuted(tree, c) or link_note(c).get("because"))
        ]
        return links, (unsettled[0] if unsettled else None)


def link_note(link: Node) -> dict[str, Any]:
    """What the planner said of a link (`LinkNote`, as stored with its proposal)."""
    proposal = link.context.get("proposal")
    note = proposal.get("link") if isinstance(proposal, dict) else None
    return note if isinstance(note, dict) else {}


def _held_alternative(tree: Tree, node: Node) -> Node | None:
    """The most likely established sub-hypothesis (not a link) of a hypothesis, if any."""
    held = [
        c
        for c in children(tree, node.id)
        if c.node_type == "hypothesis" and not is_link(c) and established(tree, c)
    ]
    return max(held, key=lambda c: stored_or_computed(tree, c)) if held else None


def established(tree: Tree, link: Node) -> bool:
    """A link its own checks confirmed: p at least `LINK_ESTABLISHED`, a measuring one."""
    return (
        is_active(link)
        and stored_or_computed(tree, link) >= LINK_ESTABLISHED
        and measured(tree, link) is True
    )


def refuted(tree: Tree, link: Node) -> bool:
    """A link its checks spoke against and none confirmed (the chain ends above it)."""
    if not is_active(link):
        return False
    found = verdicts(tree, link)
    return bool(found) and not any(e.confirmed for e in found)


def chain_confidence(tree: Tree, primary: Node, confidence: float) -> float:
    """The primary's confidence through its chain: no more than its deepest confirmed
    link's p, and at most `OPEN_LINK_MAX` while the chain ends at an open link."""
    links, open_link = chain_of(tree, primary)
    if links:
        confidence = min(confidence, stored_or_computed(tree, links[-1]))
    if open_link is not None:
        confidence = min(confidence, OPEN_LINK_MAX)
    return confidence
