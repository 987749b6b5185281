"""An analysis-page server over real HTTP on 127.0.0.1, backed by the test database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
from aiohttp import web

from benchmarks.tree_samples import build_tree, with_symptom
from bot.trees.chart import TreeCharts
from bot.trees.page import AnalysisPages, TreeLinks
from bot.trees.picture import TreePictures
from reasoning_core.ports import TreeEvent
from storage.tree_pages import PgTreeJournal, PgTreeLinkStore
from storage.trees import PgTreeStore

PUBLIC_URL = "https://whytree.example.org"


@dataclass
class Clock:
    """The pages' clock, moved by the test (links expire by it)."""

    now: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass
class PageSite:
    base_url: str
    links: TreeLinks
    trees: PgTreeStore
    journal: PgTreeJournal
    clock: Clock

    def local(self, link: str) -> str:
        """The public link, on this test server."""
        assert link.startswith(PUBLIC_URL + "/t/"), link
        return self.base_url + link.removeprefix(PUBLIC_URL)

    async def publish(
        self, size: int, language: str = "en", *, symptom: bool = False, **kwargs: Any
    ) -> tuple[str, str]:
        """Save a sample tree with two journal events; returns (tree id, local page URL).
        With `symptom`, the tree carries a measured drop and its series (a report chart)."""
        tree = build_tree(size, language, **kwargs)
        if symptom:
            tree = with_symptom(tree)
        await self.trees.create(tree)
        for kind, message in (
            ("reflection", "checkpoint: h2's checks found no data <b>→ revise</b>"),
            ("plan_revised", "plan revision 1: the previous attempt failed"),
        ):
            await self.journal.record(tree.id, TreeEvent(kind=kind, message=message))
        link = await self.links.create(tree.id)
        assert link is not None
        return tree.id, self.local(link)


@asynccontextmanager
async def page_site(pool: asyncpg.Pool[Any], *, ttl_sec: int = 3600) -> AsyncIterator[PageSite]:
    clock = Clock()
    links = TreeLinks(PgTreeLinkStore(pool), public_url=PUBLIC_URL, ttl_sec=ttl_sec, clock=clock)
    trees, journal = PgTreeStore(pool), PgTreeJournal(pool)
    pages = AnalysisPages(
        links=links, trees=trees, journal=journal, pictures=TreePictures(timeout=30),
        charts=TreeCharts(timeout=30), clock=clock,
    )  # fmt: skip
    app = web.Application()
    pages.install(app)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    try:
        yield PageSite(f"http://127.0.0.1:{port}", links, trees, journal, clock)
    finally:
        await runner.cleanup()
