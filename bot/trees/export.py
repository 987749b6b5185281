"""One tree in any of its renderings, as bytes: text, SVG, PNG or the analysis page (HTML).

Used by `whytree tree ID --format ...`: the same renderings the bot sends and
serves. Pictures and the page's inline SVG need Graphviz; without it a picture
raises `RenderError` and the page falls back to the text view.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Literal

from bot.trees.page.page import PageInput, render_page
from bot.trees.picture import RenderError, TreePictures
from bot.trees.picture.text import language_of
from reasoning_core.models import Tree
from reasoning_core.ports import TreeEvent
from reasoning_core.tree.render import render_tree_text

log = logging.getLogger(__name__)

ExportFormat = Literal["text", "svg", "png", "html"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("text", "svg", "png", "html")


async def export_tree(
    tree: Tree, fmt: ExportFormat, *, pictures: TreePictures, events: list[TreeEvent]
) -> bytes:
    """The tree rendered as `fmt`; RenderError when an SVG or PNG cannot be drawn."""
    language = language_of(tree.task)
    if fmt == "text":
        return ("\n".join(render_tree_text(tree)) + "\n").encode("utf-8")
    if fmt in ("svg", "png"):
        return await pictures.render(tree, fmt, language=language)
    try:
        svg: bytes | None = await pictures.render(tree, "svg", language=language, links=True)
    except RenderError as e:
        log.warning("tree %s: the page shows the text view instead of the picture: %s", tree.id, e)
        svg = None
    page = PageInput(
        tree=tree, events=events, svg=svg, language=language, generated_at=datetime.now(UTC)
    )
    return (await asyncio.to_thread(render_page, page)).encode("utf-8")
