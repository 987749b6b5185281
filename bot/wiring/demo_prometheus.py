"""The services demo's Prometheus for a runtime: started when PROMETHEUS_URL is not set and
`whytree demo` built the demo (demo/services/setup.py), stopped with the runtime."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from bot.config import Settings
from demo.services import PrometheusUnavailableError, has_services_demo, serve_services_demo

log = logging.getLogger(__name__)


@asynccontextmanager
async def with_demo_prometheus(settings: Settings) -> AsyncIterator[Settings]:
    """The settings, with PROMETHEUS_URL pointing at the demo's Prometheus when it serves.

    It cannot serve (no binaries, blocks unreadable): one warning, and the settings as given.
    """
    if settings.tools.prometheus_url or not has_services_demo(settings.storage.data_dir):
        yield settings
        return
    async with AsyncExitStack() as stack:
        try:
            url = await stack.enter_async_context(serve_services_demo(settings.storage.data_dir))
        except PrometheusUnavailableError as e:
            log.warning("the services demo is not served: %s", e)
            url = None
        if url is None:
            yield settings
            return
        log.info("the services demo is served by a private Prometheus on %s", url)
        tools = settings.tools.model_copy(update={"prometheus_url": url})
        yield settings.model_copy(update={"tools": tools})
