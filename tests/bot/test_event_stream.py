"""Server-Sent Events as the API writes them, over a real aiohttp server and client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from aiohttp import web

from bot.http_api.routes import stream_events


async def _slow_events() -> AsyncIterator[tuple[str, dict[str, Any]]]:
    yield "reasoning_started", {"message": "Thinking…"}
    await asyncio.sleep(0.35)  # a long step: the stream must not fall silent
    yield "completed", {"answer": {"text": "because"}}


async def test_events_are_numbered_and_silence_is_filled_with_keepalives() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await stream_events(response, _slow_events(), keepalive_sec=0.1)
        return response

    app = web.Application()
    app.router.add_get("/events", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/events") as resp,
        ):
            body = (await resp.read()).decode()
    finally:
        await runner.cleanup()
    blocks = [b for b in body.split("\n\n") if b]
    assert blocks[0] == 'id: 1\nevent: reasoning_started\ndata: {"message": "Thinking…"}'
    assert blocks[-1] == 'id: 2\nevent: completed\ndata: {"answer": {"text": "because"}}'
    assert blocks.count(": keepalive") >= 1  # 0.35 s of silence, a keep-alive every 0.1 s
