"""A loopback proxy that records every request body on its way to a model server.

Responses (streamed ones too) pass through unchanged, chunk by chunk::

    async with RecordingProxy(upstream) as proxy:
        ...  # point OPENAI_BASE_URL at proxy.base_url
        bodies = proxy.bodies  # the raw request bodies, as the server received them
"""

from __future__ import annotations

import contextlib
from types import TracebackType

import aiohttp
from aiohttp import web


class RecordingProxy:
    def __init__(self, upstream: str) -> None:
        self._upstream = upstream.rstrip("/")  # ends in /v1
        self.bodies: list[str] = []
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    async def __aenter__(self) -> RecordingProxy:
        self._session = aiohttp.ClientSession()
        app = web.Application()
        app.router.add_route("*", "/v1/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self._port = self._runner.addresses[0][1]
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        body = await request.read()
        if body:
            self.bodies.append(body.decode())
        url = f"{self._upstream}/{request.match_info['tail']}"
        headers = {"Content-Type": request.headers.get("Content-Type", "application/json")}
        async with self._session.request(
            request.method, url, data=body or None, headers=headers
        ) as upstream:
            response = web.StreamResponse(
                status=upstream.status,
                headers={"Content-Type": upstream.headers.get("Content-Type", "")},
            )
            with contextlib.suppress(ConnectionError):  # the client gave up (a timeout)
                await response.prepare(request)
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
            return response
