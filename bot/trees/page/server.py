"""`GET /t/{token}`: the analysis page, on the ops server (METRICS_PORT).

A token that opens nothing — malformed, unknown, expired, revoked, or its tree
deleted — gets the same bare 404, so the answer never tells whether a tree
exists. Every response carries a strict Content-Security-Policy, no referrer
(the token is in the URL) and no caching.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from aiohttp import web

from bot.trees.chart import ChartError, TreeCharts
from bot.trees.page.links import PAGE_PREFIX, TreeLinks
from bot.trees.page.page import CSP, PageInput, render_page
from bot.trees.picture import RenderError, TreePictures
from bot.trees.picture.text import language_of
from reasoning_core import NotFoundError, StoreError, Tree, TreeJournal, TreeStore

log = logging.getLogger(__name__)

HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Robots-Tag": "noindex, nofollow",
}
_STORE_TIMEOUT = 5.0


def _utcnow() -> datetime:
    return datetime.now(UTC)


class AnalysisPages:
    """Serves analysis pages for the links `links` made."""

    def __init__(
        self,
        *,
        links: TreeLinks,
        trees: TreeStore,
        journal: TreeJournal,
        pictures: TreePictures,
        charts: TreeCharts | None = None,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self.links = links
        self._trees = trees
        self._journal = journal
        self._pictures = pictures
        self._charts = charts
        self._clock = clock

    def install(self, app: web.Application) -> None:
        # Anything under /t/ is ours (an empty or slashed token too): the same bare 404.
        app.router.add_get(PAGE_PREFIX + "{token:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        try:
            async with asyncio.timeout(_STORE_TIMEOUT):
                page = await self._page_input(request.match_info["token"])
        except (StoreError, TimeoutError) as e:
            log.warning("analysis page unavailable: %s", e)
            return _text(503, "Service temporarily unavailable. Please try again later.")
        if page is None:
            return _text(404, "Not found.")
        html = await asyncio.to_thread(render_page, page)
        return web.Response(text=html, content_type="text/html", charset="utf-8", headers=HEADERS)

    async def _page_input(self, token: str) -> PageInput | None:
        tree_id = await self.links.open(token)
        if tree_id is None:
            return None
        try:
            tree = await self._trees.load(tree_id)
        except NotFoundError:
            return None
        language = language_of(tree.task)
        chart, note = await self._chart(tree, language)
        return PageInput(
            chart=chart,
            chart_note=note,
            tree=tree,
            events=await self._journal.events(tree.id),
            svg=await self._svg(tree, language),
            language=language,
            generated_at=self._clock(),
        )

    async def _svg(self, tree: Tree, language: str) -> bytes | None:
        try:
            return await self._pictures.render(tree, "svg", language=language, links=True)
        except RenderError as e:
            log.warning("tree %s: no picture on its page (text view instead): %s", tree.id, e)
            return None

    async def _chart(self, tree: Tree, language: str) -> tuple[bytes | None, str | None]:
        if self._charts is None or tree.synthesis is None:
            return None, None
        try:
            return await self._charts.render(tree, language=language), None
        except ChartError as e:
            log.info("tree %s: no chart on its page: %s", tree.id, e)
            return None, str(e)


def _text(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text, headers=HEADERS)
