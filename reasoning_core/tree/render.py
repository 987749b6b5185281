"""A hypothesis tree as indented plain-text lines ("Show reasoning tree", `whytree tree`).

Pure text, no markup: the front end escapes and paginates. One line per node,
depth-first in creation order::

    ⏳ Why did traffic drop on cell 12345? · 0.72
      ✅ h1 Availability outage · 0.86
        ✅ h1.v1 Availability below 90% since Monday · 0.90 — min 61.2% on 2024-05-06
      ❌ h2 Demand fell · 0.14
"""

from __future__ import annotations

from reasoning_core.models import Node, Tree
from reasoning_core.tree.aggregation import evidence_signal, has_evidence
from reasoning_core.tree.status import is_open_hypothesis
from reasoning_core.tree.walk import OPEN, children, descendants, is_active, root_of

CONFIRMED, REFUTED, INCONCLUSIVE, OPEN_MARK, PRUNED = "✅", "❌", "❔", "⏳", "✂"
#: A hypothesis this close to 0.5 is shown as undecided.
_UNDECIDED_BAND = 0.1
_TEXT_MAX = 120
_INDENT = "  "


def render_tree_text(tree: Tree, *, max_lines: int | None = None) -> list[str]:
    """Indented lines with a status mark and confidence per node.

    With `max_lines`, the output is cut to that many lines, the last one saying
    how many nodes were left out.
    """
    lines: list[str] = []
    _render(tree, root_of(tree), lines)
    if max_lines is None or len(lines) <= max_lines:
        return lines
    keep = max(0, max_lines - 1)
    return [*lines[:keep], f"… {len(lines) - keep} more nodes"]


def _render(tree: Tree, node: Node, lines: list[str]) -> None:
    lines.append(_line(tree, node))
    for child in children(tree, node.id):
        _render(tree, child, lines)


def _line(tree: Tree, node: Node) -> str:
    confidence = "—" if node.confidence is None else f"{node.confidence:.2f}"
    name = node.title or node.description
    label = name if node.node_type == "root" else f"{node.id} {name}"
    line = f"{_INDENT * node.depth}{mark(tree, node)} {label} · {confidence}"
    note = node.rejection_reason if node.rejection_reason else _result_text(node)
    return f"{line} — {_cut(note)}" if note else line


def mark(tree: Tree, node: Node) -> str:
    """The status mark of a node: ✅ ❌ ❔ ⏳ ✂."""
    if not is_active(node):
        return PRUNED if node.status == "pruned" else REFUTED
    if node.node_type == "root":
        return _root_mark(tree)
    if node.node_type == "hypothesis":
        return _hypothesis_mark(tree, node)
    if node.status in OPEN:
        return OPEN_MARK
    signal = evidence_signal(tree, node)
    if signal > 0:
        return CONFIRMED
    return REFUTED if signal < 0 else INCONCLUSIVE


def _root_mark(tree: Tree) -> str:
    if tree.status == "active" or tree.synthesis is None:
        return OPEN_MARK
    return INCONCLUSIVE if tree.synthesis.not_established else CONFIRMED


def _hypothesis_mark(tree: Tree, node: Node) -> str:
    if is_open_hypothesis(tree, node) and not _judged_when_finished(tree, node):
        return OPEN_MARK
    p = node.confidence if node.confidence is not None else node.prior
    if abs(p - 0.5) < _UNDECIDED_BAND:
        return INCONCLUSIVE
    return CONFIRMED if p > 0.5 else REFUTED  # noqa: PLR2004 - even odds


def _judged_when_finished(tree: Tree, node: Node) -> bool:
    """A finished tree's hypothesis is judged by the results it got; checks left open
    will not run any more. With no result at all it stays open (never checked)."""
    if tree.status == "active":
        return False
    return any(has_evidence(tree, n) for n in descendants(tree, node.id) if is_active(n))


def _result_text(node: Node) -> str:
    return node.result.text if node.result is not None else ""


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TEXT_MAX else text[: _TEXT_MAX - 1] + "…"
