"""The operations HTTP server on METRICS_PORT: ``/metrics``, ``/healthz`` and analysis pages.

- ``/metrics``: the registry in Prometheus' text format. Before answering it
  refreshes what lives in the database (``deep_jobs{state}``, ``database_up``);
  during a database outage it still answers 200 with ``database_up 0`` and the
  last known job counts, so the scrape itself never fails.
- ``/healthz``: 200 when a database round trip succeeds, 503 otherwise.
- ``/t/{token}``: an analysis page (bot/trees/page/), when PUBLIC_URL is set.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from bot.operations.ops import Ops
from bot.trees.page import AnalysisPages
from reasoning_core import StoreError

log = logging.getLogger(__name__)

_REFRESH_TIMEOUT = 5.0


class OpsServer:
    """aiohttp app serving /metrics, /healthz and (with `pages`) /t/{token} for one runtime."""

    def __init__(
        self,
        ops: Ops,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        pages: AnalysisPages | None = None,
    ) -> None:
        self._ops = ops
        self._pages = pages
        self._host = host
        self._port = port
        self._runner: web.AppRunner | None = None

    @property
    def port(self) -> int:
        """The bound port (useful when started with port 0)."""
        return self._port

    @property
    def base_url(self) -> str:
        host = "127.0.0.1" if self._host in ("0.0.0.0", "") else self._host
        return f"http://{host}:{self._port}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        if self._pages is not None:
            self._pages.install(app)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, self._host, self._port).start()
        self._port = self._runner.addresses[0][1]
        log.info("metrics and health on %s", self.base_url)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def refresh(self) -> bool:
        """Update the database-backed series; returns whether the database answered."""
        metrics = self._ops.metrics
        try:
            async with asyncio.timeout(_REFRESH_TIMEOUT):
                await self._ops.stats.ping()
                counts = await self._ops.stats.deep_job_counts()
        except (StoreError, TimeoutError) as e:
            log.warning("metrics refresh: database unavailable: %s", e)
            metrics.database_up.set(0)
            return False
        metrics.database_up.set(1)
        metrics.set_deep_jobs(counts)
        return True

    async def _metrics(self, request: web.Request) -> web.Response:
        await self.refresh()
        return web.Response(
            body=self._ops.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    async def _healthz(self, request: web.Request) -> web.Response:
        try:
            async with asyncio.timeout(_REFRESH_TIMEOUT):
                seconds = await self._ops.stats.ping()
        except (StoreError, TimeoutError):
            return web.json_response({"status": "unavailable", "database": "down"}, status=503)
        latency = round(seconds * 1000, 1)
        return web.json_response({"status": "ok", "database": "up", "latency_ms": latency})


@asynccontextmanager
async def serve_ops(
    ops: Ops, *, host: str, port: int, pages: AnalysisPages | None = None
) -> AsyncIterator[OpsServer]:
    """Run the ops server for the duration of the block."""
    server = OpsServer(ops, host=host, port=port, pages=pages)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def ops_server(
    ops: Ops, *, host: str, port: int | None, pages: AnalysisPages | None = None
) -> AbstractAsyncContextManager[OpsServer | None]:
    """`serve_ops`, or nothing when METRICS_PORT is not set."""
    if port is None:
        return nullcontext()
    return serve_ops(ops, host=host, port=port, pages=pages)
