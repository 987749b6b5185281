"""One tree in any of its renderings, as bytes: text, SVG, PNG, the analysis page (HTML)
or its report's chart (PNG).

Used by `whytree tree ID --format ...`: the same renderings the bot sends and
serves. Pictures and the page's inline SVG need Graphviz; without it a picture
raises `RenderError` and the page falls back to the text view.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Literal

from bot.trees.chart import ChartError, TreeCharts, sparkline
from bot.trees.page.page import PageInput, render_page
from bot.trees.picture import RenderError, TreePictures
from bot.trees.picture.text import language_of
from reasoning_core import Tree, TreeEvent, chart_data, render_tree_text

log = logging.getLogger(__name__)


def text_head(tree: Tree, language: str) -> list[str]:
    """What the text view shows above the tree: the symptom line and a one-line sparkline
    of its series (the chart, for a terminal), or the line saying why there is no chart."""
    data = chart_data(tree, language)
    if isinstance(data, str):
        return [data, ""] if tree.synthesis is not None else []
    return [data.title, f"{data.symptom.label}: {sparkline(data.symptom.values)}", ""]


ExportFormat = Literal["text", "svg", "png", "html", "chart"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("text", "svg", "png", "html", "chart")


async def export_tree(
    tree: Tree,
    fmt: ExportFormat,
    *,
    pictures: TreePictures,
    events: list[TreeEvent],
    charts: TreeCharts | None = None,
) -> bytes:
    """The tree rendered as `fmt`; RenderError when an SVG or PNG cannot be drawn,
    ChartError when the report's chart (`chart`, a PNG) cannot."""
    language = language_of(tree.task)
    charts = charts or TreeCharts(timeout=30.0)
    if fmt == "text":
        return ("\n".join([*text_head(tree, language), *render_tree_text(tree)]) + "\n").encode()
    if fmt == "chart":
        return await charts.render(tree, language=language)
    if fmt in ("svg", "png"):
        return await pictures.render(tree, fmt, language=language)
    try:
        svg: bytes | None = await pictures.render(tree, "svg", language=language, links=True)
    except RenderError as e:
        log.warning("tree %s: the page shows the text view instead of the picture: %s", tree.id, e)
        svg = None
    chart, note = None, None
    if tree.synthesis is not None:
        try:
            chart = await charts.render(tree, language=language)
        except ChartError as e:
            note = str(e)
    page = PageInput(
        tree=tree,
        events=events,
        svg=svg,
        language=language,
        generated_at=datetime.now(UTC),
        chart=chart,
        chart_note=note,
    )
    return (await asyncio.to_thread(render_page, page)).encode("utf-8")
