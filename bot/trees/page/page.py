"""The analysis page as HTML: report, tree picture, every node's evidence, the journal.

Rendered with Jinja2 and autoescaping, so every value from the tree is escaped
by default. The one exception is the tree's SVG, drawn by Graphviz from labels
we escaped ourselves (bot/trees/picture/text.py) and checked again here before it
is inlined (`inline_svg`). The page needs no JavaScript; its only stylesheet is
inline and allowed by hash in the Content-Security-Policy (`CSP`).
"""

from __future__ import annotations

import base64
import hashlib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime
from importlib import resources

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from pydantic import ValidationError

from bot.trees.page.words import page_words
from bot.trees.picture.text import without_bidi_controls
from bot.trees.picture.verdicts import (
    child_index,
    greyed,
    key_number,
    node_anchors,
    shown_confidence,
    verdict_of,
    verdict_word,
    winning_path,
)
from reasoning_core import (
    Node,
    Report,
    RowSample,
    Tree,
    TreeEvent,
    build_report,
    render_tree_text,
    root_of,
    with_runbook_title,
    with_symptom,
)

CSS = resources.files("bot.trees.page").joinpath("templates/page.css").read_text("utf-8")
_CSS_HASH = base64.b64encode(hashlib.sha256(CSS.encode("utf-8")).digest()).decode("ascii")
#: No script at all; only our own stylesheet; nothing loads from anywhere.
CSP = (
    f"default-src 'none'; style-src 'sha256-{_CSS_HASH}'; img-src data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_SVG = "{http://www.w3.org/2000/svg}"
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_UNSAFE_TAGS = {"script", "foreignObject", "iframe", "object", "embed", "use", "image"}


def _shown(value: object) -> object:
    """Every printed value: bidi overrides dropped from text (they could reverse what
    follows them), markup we made ourselves left as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return without_bidi_controls(value)
    return value


_environment = Environment(
    loader=PackageLoader("bot.trees.page", "templates"),
    autoescape=select_autoescape(["html"]),
    undefined=StrictUndefined,
    finalize=_shown,
    trim_blocks=True,
    lstrip_blocks=True,
)


@dataclass(frozen=True, slots=True)
class NodeView:
    anchor: str
    depth: int
    node: Node
    verdict: str
    verdict_word: str
    confidence: float | None
    finding: str
    greyed: bool
    on_path: bool
    tool: str
    query: str
    params: str
    rows: RowSample | None


@dataclass(frozen=True, slots=True)
class PageInput:
    """What the page shows: the tree, its journal, its picture (None: the text view)."""

    tree: Tree
    events: list[TreeEvent]
    svg: bytes | None
    language: str
    generated_at: datetime
    #: The report's chart (PNG), or the one line saying why there is none.
    chart: bytes | None = None
    chart_note: str | None = None


def render_page(page: PageInput) -> str:
    """The whole page as an HTML document."""
    tree, language = page.tree, page.language
    report = (
        build_report(
            with_runbook_title(tree, with_symptom(tree, tree.synthesis)),
            tree_id=tree.id,
            language=language,
        )
        if tree.synthesis
        else None
    )
    updated = [n.updated_at for n in tree.nodes.values() if n.updated_at is not None]
    return _environment.get_template("page.html").render(
        lang="ru" if language == "ru" else "en",
        w=page_words(language),
        css=Markup(CSS),  # our own constant stylesheet, allowed by its CSP hash
        tree=tree,
        updated=max(updated, default=tree.created_at),
        report=report,
        headline=_headline(report, language) if report else "",
        svg=inline_svg(page.svg) if page.svg is not None else None,
        chart=png_data_uri(page.chart) if page.chart is not None else None,
        chart_note=page.chart_note,
        text_lines=render_tree_text(tree),
        nodes=node_views(tree, language),
        events=page.events,
        generated_at=page.generated_at,
    )


def _headline(report: Report, language: str) -> str:
    words = page_words(language)
    if report.nothing_to_investigate:
        return words["conclusion"]
    return words["not_established"] if report.not_established else words["primary"]


def node_views(tree: Tree, language: str) -> list[NodeView]:
    """Every node, depth-first in creation order, with what the page shows of it."""
    kids, anchors = child_index(tree), node_anchors(tree)
    grey, path = greyed(tree, kids), winning_path(tree)
    views: list[NodeView] = []
    stack = [root_of(tree)]
    while stack:
        node = stack.pop()
        verdict = verdict_of(tree, node)
        views.append(
            NodeView(
                anchor=anchors[node.id],
                depth=min(node.depth, 6),
                node=node,
                verdict=verdict,
                verdict_word=verdict_word(verdict, language),
                confidence=shown_confidence(node),
                finding=key_number(node),
                greyed=node.id in grey,
                on_path=node.id in path,
                tool=str(node.context.get("tool") or ""),
                query=_query(node),
                params=_params(node),
                rows=_rows(node),
            )
        )
        stack.extend(reversed(kids.get(node.id, [])))
    return views


def _query(node: Node) -> str:
    query = node.context.get("query")
    if isinstance(query, str) and query:
        return query
    request = (node.context.get("check") or {}).get("request") or {}
    return str(request.get("url") or "") if isinstance(request, dict) else ""


def _params(node: Node) -> str:
    params = node.context.get("params")
    return "" if not params else ", ".join(str(p) for p in params)[:1000]


def _rows(node: Node) -> RowSample | None:
    seen = node.result.data.get("seen") if node.result is not None else None
    if not isinstance(seen, dict):
        return None
    try:
        return RowSample.model_validate(seen)
    except ValidationError:
        return None


def png_data_uri(png: bytes) -> str | None:
    """The chart as a `data:` URI (the CSP allows images from `data:` only); None if
    the bytes are not a PNG."""
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        return None
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def inline_svg(svg: bytes) -> Markup | None:
    """Graphviz's SVG ready to inline (prolog dropped), or None if anything in it could
    run or load: a script, a foreign object, an event handler, an outside link."""
    text = svg.decode("utf-8", "replace")
    start = text.find("<svg")
    if start < 0:
        return None
    text = text[start:]
    try:
        root = ET.fromstring(text)  # Graphviz's output of our own escaped DOT
    except ET.ParseError:
        return None
    for element in root.iter():
        tag = element.tag.removeprefix(_SVG)
        if tag in _UNSAFE_TAGS or any(a.lower().startswith("on") for a in element.attrib):
            return None
        href = element.get(_XLINK_HREF) or element.get("href")
        if href is not None and not href.startswith("#"):
            return None
    return Markup(text)  # checked above
