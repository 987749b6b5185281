"""Running an aiohttp application on API_LISTEN (``host:port``; port 0 = any free port)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from reasoning_core.errors import ConfigurationError

log = logging.getLogger(__name__)


def parse_listen(value: str) -> tuple[str, int]:
    """``"0.0.0.0:8081"``, ``":8081"`` (all interfaces) -> host and port."""
    host, sep, port = value.strip().rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:  # noqa: PLR2004
        raise ConfigurationError(f"API_LISTEN: {value!r} is not host:port, e.g. 0.0.0.0:8081")
    return host.strip("[]") or "0.0.0.0", int(port)


@asynccontextmanager
async def serve(app: web.Application, *, host: str, port: int) -> AsyncIterator[str]:
    """Serve `app` for the duration of the block; yields its base URL."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        bound = runner.addresses[0][1]
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
        url = f"http://{shown}:{bound}"
        log.info("API and alert receiver on %s", url)
        yield url
    finally:
        await runner.cleanup()
