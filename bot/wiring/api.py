"""Composition root, edge part: the HTTP API and the Alertmanager receiver on API_LISTEN.

`api_server` builds one aiohttp application, adds the alert receiver's and the
API's routes to it (each package only adds routes, so the same routes can be
mounted on another server, e.g. next to Telegram's webhook), starts the alert
workers and serves it for the duration of the block.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import asyncpg
from aiohttp import web

from bot.alerts import (
    AlertPosting,
    AlertReceiver,
    AlertRouter,
    AlertWorker,
    ChatRoutes,
    PrometheusRules,
    QuietAlerts,
    RunbookIndex,
    WebhookCredentials,
    load_mapping,
)
from bot.alerts.alertmanager import AlertmanagerClient
from bot.alerts.lookup import MAX_SERIES as LOOKUP_SERIES
from bot.alerts.lookup import TIMEOUT_SEC as LOOKUP_TIMEOUT_SEC
from bot.alerts.lookup import SeriesLookup
from bot.config import ApiSettings, Settings
from bot.delivery.drain import Drain
from bot.http_api import ApiGate, ApiRoutes, JobBoard
from bot.operations.http_server import local_url, parse_listen, serve
from bot.operations.ops import Ops
from reasoning_core.ports import AlertStore, ApiKeyStore, UserStore
from reasoning_core.service import ReasoningService
from reasoning_core.tools.prometheus import PrometheusTool
from storage.alerts import PgAlertStore
from storage.api_keys import PgApiJobStore, PgApiKeyStore
from storage.leases import PgRateHits

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class ApiServer:
    """The running server: its URL, the alert workers and the API's jobs (for tests)."""

    url: str
    alerts: AlertStore
    worker: AlertWorker
    board: JobBoard


class EdgeParts(Protocol):
    """What the server needs from the runtime (bot/wiring/app.py's `Runtime` has them all)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def pool(self) -> asyncpg.Pool[Any]: ...
    @property
    def service(self) -> ReasoningService: ...
    @property
    def users(self) -> UserStore: ...
    @property
    def ops(self) -> Ops: ...
    @property
    def drain(self) -> Drain: ...


@asynccontextmanager
async def api_server(
    runtime: EdgeParts, poster: AlertPosting, *, shared: web.Application | None = None
) -> AsyncIterator[ApiServer | None]:
    """The API and the alert receiver on API_LISTEN, alert reports posted by `poster` (a
    chat front end's: bot/telegram/process.py gives Telegram's); nothing (None) when
    API_LISTEN is unset.

    With `shared` (Telegram's webhook app, when API_LISTEN is WEBHOOK_LISTEN) the routes
    are added to that application, which its owner serves; else a server of its own."""
    api = runtime.settings.api
    if api.listen is None:
        yield None
        return
    host, port = parse_listen(api.listen)
    store = PgAlertStore(runtime.pool)
    worker = AlertWorker(
        store=store,
        service=runtime.service,
        poster=poster,
        concurrency=api.alert_concurrency,
        drain=runtime.drain,
    )
    board = JobBoard(PgApiJobStore(runtime.pool), drain=runtime.drain)
    app = web.Application() if shared is None else shared
    _receiver(api, runtime, store, poster, worker).install(app)
    ApiRoutes(
        service=runtime.service,
        gate=_gate(runtime, PgApiKeyStore(runtime.pool)),
        jobs=PgApiJobStore(runtime.pool),
        board=board,
    ).install(app)
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(worker.running())
        if shared is None:
            url = await stack.enter_async_context(serve(app, host=host, port=port))
        else:
            url = local_url(host, port)
            log.info("API and alert receiver on the webhook's server (%s)", url)
        try:
            yield ApiServer(url=url, alerts=store, worker=worker, board=board)
        finally:
            await board.aclose()


def alertmanager_client(api: ApiSettings) -> AlertmanagerClient | None:
    """ALERTMANAGER_URL with its credentials; None when it is not set."""
    if api.alertmanager_url is None:
        return None
    return AlertmanagerClient(
        api.alertmanager_url,
        token=_secret(api.alertmanager_token),
        basic=_secret(api.alertmanager_basic_auth),
    )


def api_keys(pool: asyncpg.Pool[Any]) -> ApiKeyStore:
    """The API key store, for the admin commands (CLI and Telegram)."""
    return PgApiKeyStore(pool)


def _receiver(
    api: ApiSettings,
    runtime: EdgeParts,
    store: AlertStore,
    poster: AlertPosting,
    worker: AlertWorker,
) -> AlertReceiver:
    runbooks = runtime.ops.runbooks.current.runbooks
    mapping = load_mapping(api.alert_mapping, runbooks=runbooks.keys())
    router = AlertRouter(
        mapping=mapping,
        index=RunbookIndex(runbooks.values()),
        quiet=QuietAlerts.parse(api.alert_quiet),
    )
    prometheus = runtime.settings.tools.prometheus_url
    routes = ChatRoutes.parse(api.alert_chats)
    credentials = WebhookCredentials(
        token=_secret(api.alert_webhook_token),
        basic=_secret(api.alert_webhook_basic_auth),
    )
    if not credentials.configured:
        log.warning(
            "the alert receiver refuses every call: set ALERT_WEBHOOK_TOKEN or "
            "ALERT_WEBHOOK_BASIC_AUTH"
        )
    if not routes.configured:
        log.warning("ALERT_CHATS is empty: alerts are not investigated (no chat to post to)")
    return AlertReceiver(
        store=store,
        mapping=router,
        routes=routes,
        credentials=credentials,
        poster=poster,
        wake=worker.wake,
        max_bytes=api.alert_max_bytes,
        queue_max=api.alert_queue_max,
        rules=PrometheusRules(str(prometheus)) if prometheus is not None else None,
        lookup=_series_lookup(str(prometheus)) if prometheus is not None else None,
    )


def _series_lookup(prometheus: str) -> SeriesLookup:
    """A missing parameter looked up in the alert's series: one query, bounded."""
    tool = PrometheusTool(prometheus, timeout_sec=LOOKUP_TIMEOUT_SEC, max_series=LOOKUP_SERIES)
    return SeriesLookup(tool)


def _gate(runtime: EdgeParts, keys: ApiKeyStore) -> ApiGate:
    ops = runtime.ops
    return ApiGate(
        keys=keys,
        users=runtime.users,
        access=ops.access_policy(),
        usage=ops.usage,
        hits=PgRateHits(runtime.pool),
        daily_token_budget=ops.daily_token_budget,
    )


def _secret(value: object) -> str | None:
    getter = getattr(value, "get_secret_value", None)
    return None if getter is None else str(getter())
