"""A `Tree` as Graphviz DOT source: boxes coloured by verdict, confidences, winning path.

Every piece of node text goes into an HTML-like label through `text.label_lines`
(cleaned, wrapped, cut, XML-escaped); everything else in the source (ids,
colours, numbers) is generated here, so node text can never break out of its
label. Root at the top, or left to right when a level is wide; big trees are
folded (`folding`).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.trees.picture.folding import MAX_NODES, Fold, fold
from bot.trees.picture.text import cut, dot_quoted, label_lines
from bot.trees.picture.verdicts import (
    Verdict,
    child_index,
    greyed,
    key_number,
    node_anchors,
    shown_confidence,
    verdict_of,
    verdict_word,
    winning_path,
)
from reasoning_core import Node, Tree, gettext, root_of, vote

FONT = "DejaVu Sans"
#: A level with more boxes than this is laid out left to right.
WIDE_LEVEL = 6
WIN_COLOUR = "#1b5e20"


@dataclass(frozen=True, slots=True)
class Style:
    fill: str
    border: str
    text: str


STYLES: dict[Verdict, Style] = {
    "confirmed": Style("#e6f4ea", "#2e7d32", "#1b5e20"),
    "refuted": Style("#fdecea", "#c62828", "#b71c1c"),
    "inconclusive": Style("#fff8e1", "#f9a825", "#8d6e00"),
    "rejected": Style("#eeeeee", "#9e9e9e", "#616161"),
    "not_run": Style("#ffffff", "#9e9e9e", "#616161"),
}
ROOT_STYLE = Style("#e3f2fd", "#1565c0", "#0d47a1")
GREY_STYLE = Style("#f5f5f5", "#bdbdbd", "#757575")
MARKS: dict[Verdict, str] = {
    "confirmed": "✔",
    "refuted": "✘",
    "inconclusive": "?",
    "rejected": "⊘",
    "not_run": "○",
}


@dataclass(frozen=True, slots=True)
class _Context:
    tree: Tree
    language: str
    grey: set[str]
    path: set[str]
    anchors: dict[str, str] | None


def tree_to_dot(
    tree: Tree, *, language: str = "en", links: bool = False, max_nodes: int = MAX_NODES
) -> str:
    """DOT source for `tree`; with `links`, each box links to "#node-N" (the page's anchors)."""
    kids = child_index(tree)
    root = root_of(tree)
    ctx = _Context(
        tree=tree,
        language="ru" if language == "ru" else "en",
        grey=greyed(tree, kids),
        path=winning_path(tree),
        anchors=node_anchors(tree) if links else None,
    )
    folded = fold(
        root,
        kids,
        rank=lambda n: _rank(ctx, n),
        verdict=lambda n: verdict_of(tree, n),
        max_nodes=max_nodes,
    )
    ids = {node_id: f"n{index}" for index, node_id in enumerate(folded.drawn)}
    lines = _header(_wide(tree, folded.drawn), ctx.language)
    for node_id in folded.drawn:
        node = tree.nodes[node_id]
        lines.append(f"  {ids[node_id]} [{_node_attributes(ctx, node)}];")
        if node.parent_id in ids:
            lines.append(f"  {ids[node.parent_id]} -> {ids[node_id]} [{_edge(ctx, node)}];")
    for index, folded_away in enumerate(folded.folds):
        lines.extend(_fold_lines(f"f{index}", ids[folded_away.parent_id], folded_away, ctx))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _rank(ctx: _Context, node: Node) -> tuple[float, ...]:
    return (node.id not in ctx.path, node.id in ctx.grey, -(shown_confidence(node) or 0.0))


def _wide(tree: Tree, drawn: list[str]) -> bool:
    depths: dict[int, int] = {}
    for node_id in drawn:
        depth = tree.nodes[node_id].depth
        depths[depth] = depths.get(depth, 0) + 1
    return max(depths.values(), default=0) > WIDE_LEVEL


def _header(wide: bool, language: str) -> list[str]:
    legend = "  ".join(
        f'<FONT COLOR="{STYLES[v].border}">{"□" if v == "not_run" else "■"}</FONT>'
        f" {verdict_word(v, language)}"
        for v in STYLES
    )
    win = f'<FONT COLOR="{WIN_COLOUR}">━</FONT> {gettext(language, "winning path")}'
    return [
        "digraph tree {",
        f'  graph [rankdir={"LR" if wide else "TB"}, fontname="{FONT}", fontsize=11,'
        f' bgcolor="white", pad=0.25, nodesep={0.2 if wide else 0.3},'
        f" ranksep={0.9 if wide else 0.5}, labelloc=b, label=<{legend}  {win}>];",
        f'  node [shape=box, style="rounded,filled", fontname="{FONT}", fontsize=12,'
        ' margin="0.14,0.07"];',
        f'  edge [fontname="{FONT}", fontsize=10, arrowsize=0.7, color="#757575"];',
    ]


def _style(ctx: _Context, node: Node, verdict: Verdict) -> Style:
    if node.id in ctx.grey:
        return GREY_STYLE if verdict != "rejected" else STYLES["rejected"]
    return ROOT_STYLE if node.node_type == "root" else STYLES[verdict]


def _node_attributes(ctx: _Context, node: Node) -> str:
    verdict = verdict_of(ctx.tree, node)
    style = _style(ctx, node, verdict)
    dashed = verdict == "not_run" or node.id in ctx.grey
    attributes = [
        f"label=<{_label(ctx, node, verdict, style)}>",
        f'fillcolor="{style.fill}"',
        f'color="{WIN_COLOUR if node.id in ctx.path else style.border}"',
        f"penwidth={3 if node.id in ctx.path else 1.2}",
        f'style="rounded,filled{",dashed" if dashed else ""}"',
    ]
    if ctx.anchors is not None:  # a link to the page's details, the title on hover
        tooltip = dot_quoted(cut(node.title or node.description or node.id, 200))
        attributes.append(f'URL="#{ctx.anchors[node.id]}", tooltip="{tooltip}"')
    return ", ".join(attributes)


def _label(ctx: _Context, node: Node, verdict: Verdict, style: Style) -> str:
    is_root = node.node_type == "root"
    name = node.title or node.description or node.id
    head = "" if is_root else f"{label_lines(node.id, width=16, max_lines=1)[0]} · "
    status = f"{head}{MARKS[verdict]} {verdict_word(verdict, ctx.language)}"
    confidence = shown_confidence(node)
    if confidence is not None:
        status += f" · {confidence:.2f}"
    parts = [f'<FONT POINT-SIZE="10" COLOR="{style.text}">{status}</FONT>']
    title = label_lines(name, width=44 if is_root else 30, max_lines=3)
    parts.append("<B>" + "<BR/>".join(title) + "</B>")
    finding = key_number(node)
    if finding:
        lines = label_lines(finding, width=38, max_lines=2)
        parts.append('<FONT POINT-SIZE="10">' + "<BR/>".join(lines) + "</FONT>")
    if node.rejection_reason:
        lines = label_lines(node.rejection_reason, width=38, max_lines=2)
        parts.append(
            '<FONT POINT-SIZE="9" COLOR="#616161"><I>' + "<BR/>".join(lines) + "</I></FONT>"
        )
    return "<BR/>".join(parts)


def _edge(ctx: _Context, node: Node) -> str:
    on_path = node.id in ctx.path
    colour = WIN_COLOUR if on_path else ("#bdbdbd" if node.id in ctx.grey else "#757575")
    attributes = [f'color="{colour}"', f"penwidth={3 if on_path else 1}"]
    weight = _edge_label(node)
    if weight:
        attributes.append(f'label=" {weight}", fontcolor="{colour}"')
    return ", ".join(attributes)


def _edge_label(node: Node) -> str:
    """The confidence on the edge into the parent: a check's signed vote, else p."""
    if node.node_type in ("verification", "leaf"):
        if node.result is None:
            return ""
        signed = vote(node.result)
        return "±0" if signed == 0 else f"{signed:+.2f}".replace("-", "−")
    confidence = shown_confidence(node)
    return "" if confidence is None else f"{confidence:.2f}"


def _fold_lines(fold_id: str, parent: str, folded: Fold, ctx: _Context) -> list[str]:
    more = gettext(ctx.language, "+{n} more").format(n=folded.hidden)
    counts = ", ".join(
        f"{count} {verdict_word(v, ctx.language)}" for v, count in folded.verdicts.most_common()
    )
    label = f"<B>{more}</B><BR/>" + '<FONT POINT-SIZE="9">' + counts + "</FONT>"
    return [
        f'  {fold_id} [label=<{label}>, style="rounded,dashed", color="#9e9e9e",'
        ' fontcolor="#616161"];',
        f'  {parent} -> {fold_id} [style=dashed, color="#bdbdbd"];',
    ]
