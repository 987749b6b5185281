"""Running an aiohttp application on ``host:port`` (port 0 = any free port): the HTTP API and
alert receiver on API_LISTEN, Telegram's webhook on WEBHOOK_LISTEN, or both on one server."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from reasoning_core import ConfigurationError

log = logging.getLogger(__name__)


def parse_listen(value: str) -> tuple[str, int]:
    """``"0.0.0.0:8081"``, ``":8081"`` (all interfaces) -> host and port."""
    host, sep, port = value.strip().rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:  # noqa: PLR2004
        raise ConfigurationError(f"API_LISTEN: {value!r} is not host:port, e.g. 0.0.0.0:8081")
    return host.strip("[]") or "0.0.0.0", int(port)


def local_url(host: str, port: int) -> str:
    """The base URL a client on this machine uses for a server bound to host:port."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    return f"http://{shown}:{port}"


@asynccontextmanager
async def serve(app: web.Application, *, host: str, port: int) -> AsyncIterator[str]:
    """Serve `app` for the duration of the block; yields its base URL."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=2.0)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        bound = runner.addresses[0][1]
        url = local_url(host, bound)
        log.info("HTTP server listening on %s", url)
        yield url
    finally:
        await runner.cleanup()
