"""Serving a fake's aiohttp app on a free loopback port: the start and stop every fake shares."""

from __future__ import annotations

from aiohttp import web


class LoopbackServer:
    """One app on 127.0.0.1 and a port the system picked; `url` once started."""

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self, app: web.Application) -> None:
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
