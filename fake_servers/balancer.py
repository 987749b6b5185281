"""A round-robin HTTP load balancer on loopback, in front of N webhook replicas.

Each POST goes to the next backend; a backend that does not answer (killed) is
skipped and the next one tried, as a load balancer with passive health checks does.
"""

from __future__ import annotations

import itertools
from types import TracebackType

import aiohttp
from aiohttp import web


class RoundRobinBalancer:
    def __init__(self, backends: list[str]) -> None:
        self.backends = backends
        self._turn = itertools.count()
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/webhook"

    async def __aenter__(self) -> RoundRobinBalancer:
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        app = web.Application()
        app.router.add_route("POST", "/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._http is not None:
            await self._http.close()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._http is not None
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower().startswith("x-telegram")}
        headers["Content-Type"] = "application/json"
        start = next(self._turn)
        for i in range(len(self.backends)):
            backend = self.backends[(start + i) % len(self.backends)]
            try:
                async with self._http.post(
                    backend + request.path, data=body, headers=headers
                ) as answer:
                    return web.Response(
                        status=answer.status,
                        body=await answer.read(),
                        content_type=answer.content_type,
                    )
            except (aiohttp.ClientError, TimeoutError):
                continue
        return web.Response(status=502, text="no backend answered")
