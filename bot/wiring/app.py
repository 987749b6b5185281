"""The composition root: settings in, a wired service, dispatcher and bot out.

This is the only module of `bot` that imports `storage` and the LLM adapter.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

import asyncpg
from aiogram import Bot, Dispatcher
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.exceptions import ClientDecodeError, TelegramAPIError
from aiohttp import web

from bot.alerts import ALERT_USER_ID
from bot.config import (
    TELEGRAM_DEFAULT_API,
    LLMSettings,
    MemorySettings,
    Settings,
    StorageSettings,
    StrategySettings,
    TelegramSettings,
    ToolsSettings,
)
from bot.delivery.drain import Drain, stopped_by_signals
from bot.delivery.inbox import InboxWorker, process_name
from bot.delivery.janitor import Janitor, RetentionPolicy
from bot.delivery.limits import LeasedChatLocks, LeasedDeepSlots, SharedWindow
from bot.delivery.polling import poll_into_inbox
from bot.delivery.sending import install_outbox
from bot.http_api import API_CHAT_BASE
from bot.operations.billing import BilledTurnWriter
from bot.operations.http_server import parse_listen, serve
from bot.operations.install import install_ops
from bot.operations.metrics import Metrics
from bot.operations.ops import Ops, RunbookLibrary
from bot.operations.server import ops_server
from bot.replies.report_chart import ReportCharts
from bot.replies.sending import send_answer
from bot.telegram.handlers import (
    admin,
    alerts,
    clarify,
    common,
    errors,
    fallback,
    memory,
    questions,
    trees,
)
from bot.telegram.middlewares import (
    NormalisedTextMiddleware,
    OneQuestionPerChatMiddleware,
    UserMiddleware,
)
from bot.telegram.middlewares.i18n import LanguageMiddleware, catalogues
from bot.telegram.session import install_request_middlewares
from bot.telegram.webhook import build_webhook_app, webhook_path
from bot.trees.chart import TreeCharts
from bot.trees.page import AnalysisPages, TreeLinks
from bot.trees.picture import TreePictures
from bot.wiring.api import alert_actions, api_server
from bot.wiring.deep import log_news_reader, open_deep, open_tools
from bot.wiring.demo_prometheus import with_demo_prometheus
from bot.wiring.instrumented import InstrumentedChatModel, MeteredReasoningService
from reasoning_core.answers.deep_path import DeepPath
from reasoning_core.changes.scan import POINTS, ScanLimits
from reasoning_core.changes.scanner import ChangeScanner
from reasoning_core.errors import ConfigurationError, StoreError
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.llm.pseudonyms import PseudonymizingChatModel
from reasoning_core.logs.news import LogNewsReader
from reasoning_core.memory.budget import ContextBudget
from reasoning_core.memory.long_term import LongTermMemory
from reasoning_core.memory.turn import SessionLimits, TurnLoader, TurnRecorder
from reasoning_core.models import Answer
from reasoning_core.ports import ChatModel, Job, TreeJournal
from reasoning_core.service import Deps, ReasoningService
from reasoning_core.strategy.clarification import Clarifier
from reasoning_core.strategy.selector import StrategySelector
from reasoning_core.tools.base import Tool
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.understanding.catalogue import EntityCatalogue
from storage.admin import PgAccountStore
from storage.api_keys import PgApiKeyStore
from storage.audit import PgAuditStore
from storage.clarifications import PgClarificationStore
from storage.embedded import EmbeddedPostgres
from storage.exchanges import PgExchangeStore, PgTurnContextStore
from storage.inbox import PgInbox
from storage.leases import PgLeases, PgRateHits
from storage.memory import PgMemoryStore, PgProjectStore
from storage.migrate import READ_ONLY_PROBLEM, apply_migrations, pending_migrations, read_only
from storage.outbox import PgOutbox
from storage.pool import QueryObserver, create_pool, redact_dsn
from storage.retention import PgRetention
from storage.sessions import PgSessionStore
from storage.stats import PgStatsStore
from storage.tree_pages import PgTreeJournal, PgTreeLinkStore
from storage.trees import PgTreeStore
from storage.turns import PgTurnWriter
from storage.usage import PgUsageStore
from storage.users import PgUserStore

log = logging.getLogger(__name__)


def _change_scanner(
    tools: ToolsSettings, data_clock: Callable[[], datetime] | None
) -> ChangeScanner | None:
    """The change scan over PROMETHEUS_URL, bounded by CHANGE_SCAN_* (None: no Prometheus)."""
    if not tools.prometheus_url:
        return None
    limits = ScanLimits(
        max_series=tools.change_scan_max_series,
        max_queries=tools.change_scan_max_queries,
        budget_sec=tools.change_scan_budget_sec,
    )
    tool = PrometheusTool(
        tools.prometheus_url,
        timeout_sec=tools.change_scan_budget_sec,
        max_series=tools.change_scan_max_series,
        max_samples=tools.change_scan_max_series * POINTS,
    )
    if data_clock is None:
        return ChangeScanner(tool, limits)
    return ChangeScanner(tool, limits, clock=data_clock)


@dataclass(frozen=True, kw_only=True)
class Runtime:
    """Everything a front end needs, opened together and closed together."""

    settings: Settings
    pool: asyncpg.Pool[Any]
    service: ReasoningService
    users: PgUserStore
    memories: PgMemoryStore
    projects: PgProjectStore
    ops: Ops
    pictures: TreePictures
    #: Deep reports' charts, sent after the report (bot/replies/report_chart.py).
    charts: ReportCharts
    journal: TreeJournal
    #: The analysis pages, served on METRICS_PORT; None without PUBLIC_URL.
    pages: AnalysisPages | None
    #: Exactly-once delivery: replies out, leases across replicas (the inbox is a bot's:
    #: `delivering_updates` opens it for the bot it is given).
    outbox: PgOutbox
    leases: PgLeases
    #: This process's stop: shared by everything that takes work (bot/delivery/drain.py).
    drain: Drain


@asynccontextmanager
async def open_database(
    storage: StorageSettings, *, observe: QueryObserver | None = None
) -> AsyncIterator[tuple[str, asyncpg.Pool[Any]]]:
    """The DSN and a pool: the embedded PostgreSQL unless DATABASE_URL is set."""
    embedded: EmbeddedPostgres | None = None
    if storage.database_url is not None:
        dsn = storage.database_url.get_secret_value()
    else:
        embedded = EmbeddedPostgres(storage.data_dir)
        dsn = await asyncio.to_thread(embedded.start)
    try:
        pool = await create_pool(dsn, max_size=storage.pool_max_size, observe=observe)
        try:
            yield dsn, pool
        finally:
            await pool.close()
    finally:
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)


@asynccontextmanager
async def open_runtime(
    settings: Settings,
    *,
    observe: QueryObserver | None = None,
    data_clock: Callable[[], datetime] | None = None,
) -> AsyncIterator[Runtime]:
    """Database (embedded unless DATABASE_URL is set), migrations, stores, LLM, service;
    the services demo's Prometheus when PROMETHEUS_URL is not set (bot/wiring/demo_prometheus.py);
    `observe` sees every statement sent to the database. `data_clock`: the moment the data
    is read at (the checks' "now" and the names' moment), for replaying a recorded
    Prometheus; the wall clock when None."""
    async with (
        with_demo_prometheus(settings) as served,
        _open_runtime(served, observe=observe, data_clock=data_clock) as runtime,
    ):
        yield runtime


@asynccontextmanager
async def _open_runtime(
    settings: Settings,
    *,
    observe: QueryObserver | None = None,
    data_clock: Callable[[], datetime] | None = None,
) -> AsyncIterator[Runtime]:
    chat_model = build_chat_model(settings.llm)
    try:
        async with open_database(settings.storage, observe=observe) as (dsn, pool):
            async with pool.acquire() as conn:
                if await read_only(conn):
                    raise StoreError(READ_ONLY_PROBLEM)
                await apply_migrations(conn)
            ops = _build_ops(settings, pool, chat_model)
            llm = (
                None
                if chat_model is None
                else InstrumentedChatModel(
                    PseudonymizingChatModel(chat_model)
                    if settings.llm.pseudonymize
                    else chat_model,
                    metrics=ops.metrics,
                    usage=ops.usage,
                )
            )
            changes = _change_scanner(settings.tools, data_clock)
            async with open_deep(
                settings.deep,
                settings.tools,
                heartbeat_sec=settings.delivery.inbox_lease_sec / 3,
                pool=pool,
                dsn=dsn,
                chat_model=llm,
                runbooks=lambda: ops.runbooks.current,
                data_clock=data_clock,
                changes=changes,
            ) as (deep, catalogue):
                runtime = _wire(
                    settings,
                    pool,
                    llm,
                    ops,
                    deep,
                    catalogue=catalogue,
                    changes=changes,
                    log_news=log_news_reader(settings.tools, data_clock),
                )
                await runtime.service.purge_memory(ttl_days=settings.memory.ttl_days)
                yield runtime
    finally:
        if chat_model is not None:
            await chat_model.aclose()


@dataclass(frozen=True, kw_only=True)
class Inspection:
    """What `whytree doctor` looks at: where the database is, its state, the tools."""

    where: str
    pending_migrations: list[str]
    read_only: bool
    tools: dict[str, Tool]
    #: Why the SQL tool could not connect (TOOLS_SQL_DSN), or None.
    sql_problem: str | None
    #: The SQL tool runs as the reader role the pending migrations create: it is checked
    #: once a start has applied them (not opened before).
    sql_after_migrations: bool = False


@asynccontextmanager
async def open_inspection(settings: Settings) -> AsyncIterator[Inspection]:
    """The database without changing it (no migrations) and the deep path's tools
    (with the services demo's Prometheus, as a runtime would have it).

    Raises `StoreError` when the database cannot be reached or started.
    """
    async with with_demo_prometheus(settings) as served, _open_inspection(served) as found:
        yield found


@asynccontextmanager
async def _open_inspection(settings: Settings) -> AsyncIterator[Inspection]:
    async with open_database(settings.storage) as (dsn, pool):
        async with pool.acquire() as conn:
            pending = await pending_migrations(conn)
            is_read_only = await read_only(conn)
        where = (
            f"DATABASE_URL {redact_dsn(dsn)}"
            if settings.storage.database_url is not None
            else f"embedded PostgreSQL in {settings.storage.data_dir / 'pg'}"
        )
        after_migrations = bool(pending) and settings.tools.sql_dsn is None
        async with open_tools(settings.tools, dsn, pool, sql=not after_migrations) as (
            tools,
            sql_problem,
        ):
            yield Inspection(
                where=where,
                pending_migrations=pending,
                read_only=is_read_only,
                tools=tools,
                sql_problem=sql_problem,
                sql_after_migrations=after_migrations,
            )


def _wire(
    settings: Settings,
    pool: asyncpg.Pool[Any],
    llm: ChatModel | None,
    ops: Ops,
    deep: DeepPath,
    *,
    catalogue: EntityCatalogue,
    changes: ChangeScanner | None = None,
    log_news: LogNewsReader | None = None,
) -> Runtime:
    memories, projects = PgMemoryStore(pool), PgProjectStore(pool)
    sessions, exchanges = PgSessionStore(pool), PgExchangeStore(pool)
    memory = _long_term_memory(settings.memory, memories)
    deps = Deps(
        chat_model=llm,
        sessions=sessions,
        turns=TurnLoader(
            context=PgTurnContextStore(pool),
            memory_top_k=settings.memory.top_k if settings.memory.long_term_enabled else 0,
            sessions=sessions,
            exchanges=exchanges,
            projects=projects,
            limits=_session_limits(settings.memory),
        ),
        recorder=TurnRecorder(
            exchanges=exchanges, memory=memory, writer=BilledTurnWriter(PgTurnWriter(pool))
        ),
        memory=memory,
        budget=ContextBudget(total_tokens=settings.llm.context_budget_tokens),
        strategy=_strategy_selector(settings.strategy, llm),
        clarifier=Clarifier(
            PgClarificationStore(pool), ttl_sec=settings.strategy.clarification_ttl_sec
        ),
        deep=deep,
        deep_slots=ops.deep_slots,
        catalogue=catalogue,
        changes=changes,
        log_news=log_news,
    )
    pictures = TreePictures(timeout=settings.observability.tree_picture_timeout_sec)
    charts = ReportCharts(
        charts=TreeCharts(timeout=settings.observability.tree_picture_timeout_sec),
        trees=ops.trees,
    )
    journal = PgTreeJournal(pool)
    pages = None
    if ops.links.enabled:
        pages = AnalysisPages(
            links=ops.links, trees=ops.trees, journal=journal, pictures=pictures,
            charts=charts.charts,
        )  # fmt: skip
    return Runtime(
        settings=settings,
        pool=pool,
        service=MeteredReasoningService(deps, metrics=ops.metrics),
        users=PgUserStore(pool),
        memories=memories,
        projects=projects,
        ops=ops,
        pictures=pictures,
        charts=charts,
        journal=journal,
        pages=pages,
        outbox=PgOutbox(pool),
        leases=PgLeases(pool),
        drain=Drain(settings.delivery.drain_timeout_sec),
    )


def _long_term_memory(memory: MemorySettings, store: PgMemoryStore) -> LongTermMemory:
    return LongTermMemory(
        store, enabled=memory.long_term_enabled, top_k=memory.top_k, char_budget=memory.char_budget
    )


def _session_limits(memory: MemorySettings) -> SessionLimits:
    return SessionLimits(
        ttl_sec=memory.session_ttl_sec,
        max_exchanges=memory.session_max_exchanges,
        max_chars=memory.session_max_chars,
    )


def _strategy_selector(strategy: StrategySettings, llm: ChatModel | None) -> StrategySelector:
    return StrategySelector(
        chat_model=llm,
        enabled=strategy.enabled,
        timeout_sec=strategy.timeout_sec,
        cache_ttl_sec=strategy.cache_ttl_sec,
        cache_size=strategy.cache_size,
        rules_first=strategy.rules_first,
    )


def _build_ops(
    settings: Settings, pool: asyncpg.Pool[Any], chat_model: OpenAIChatModel | None
) -> Ops:
    """Stores, limits and metrics for access control, admin commands and the ops server."""
    access, observability = settings.access, settings.observability
    return Ops(
        accounts=PgAccountStore(pool),
        audit=PgAuditStore(pool),
        usage=PgUsageStore(pool),
        stats=PgStatsStore(pool),
        trees=PgTreeStore(pool),
        links=TreeLinks(
            PgTreeLinkStore(pool),
            public_url=observability.public_url,
            ttl_sec=observability.tree_link_ttl_sec,
        ),
        metrics=Metrics(),
        window=SharedWindow(PgRateHits(pool), limit=access.rate_limit_per_min),
        deep_slots=LeasedDeepSlots(
            PgLeases(pool),
            limit=access.max_concurrent_deep_per_user,
            ttl_sec=settings.delivery.inbox_lease_sec,
        ),
        runbooks=RunbookLibrary(
            settings.deep.runbook_dirs, include_shipped=settings.deep.runbooks_shipped
        ),
        admin_ids=frozenset(access.admin_ids),
        access_mode=access.mode,
        daily_token_budget=access.daily_token_budget,
        llm_ping=chat_model.ping if chat_model is not None else None,
        api_keys=PgApiKeyStore(pool),
    )


def build_chat_model(llm: LLMSettings) -> OpenAIChatModel | None:
    """The OpenAI-compatible model, or None when no LLM is configured."""
    if not llm.configured:
        return None
    return OpenAIChatModel(
        base_url=llm.base_url,
        api_key=llm.api_key.get_secret_value() if llm.api_key else None,
        model=llm.model,
        timeout=llm.timeout_sec,
        max_retries=llm.max_retries,
    )


def build_bot(telegram: TelegramSettings) -> Bot:
    if telegram.bot_token is None:
        raise ConfigurationError("TELEGRAM_BOT_TOKEN is not set")
    session = AiohttpSession()
    if telegram.api_url != TELEGRAM_DEFAULT_API:
        session = AiohttpSession(api=TelegramAPIServer.from_base(telegram.api_url))
    bot = Bot(
        token=telegram.bot_token.get_secret_value(),
        session=session,
        default=DefaultBotProperties(parse_mode=ParseMode.HTML),
    )
    install_request_middlewares(bot, send_deadline_sec=telegram.send_deadline_sec)
    return bot


def build_dispatcher(runtime: Runtime) -> Dispatcher:
    delivery = runtime.settings.delivery
    dp = Dispatcher(
        service=runtime.service,
        users=runtime.users,
        chat_locks=LeasedChatLocks(runtime.leases, ttl_sec=delivery.inbox_lease_sec),
        max_reply_messages=delivery.max_reply_messages,
        stream_replies=delivery.stream_replies,
        background=set(),  # tasks started at start-up, kept referenced until done
        pictures=runtime.pictures,
        tree_links=runtime.ops.links,
        report_charts=runtime.charts,
    )
    normalised = NormalisedTextMiddleware()  # first: everything after sees clean text
    dp.message.outer_middleware(normalised)
    dp.edited_message.outer_middleware(normalised)
    user_middleware = UserMiddleware(runtime.users)
    dp.message.outer_middleware(user_middleware)
    dp.edited_message.outer_middleware(user_middleware)
    dp.callback_query.outer_middleware(user_middleware)
    language = LanguageMiddleware(catalogues())  # before access: refusals speak it too
    for observer in (dp.message, dp.edited_message, dp.callback_query):
        observer.outer_middleware(language)
    dp.message.middleware(OneQuestionPerChatMiddleware(dp["chat_locks"]))
    install_ops(dp, runtime.ops)
    dp.include_routers(
        errors.create_router(),
        common.create_router(),
        clarify.create_router(),
        trees.create_router(),
        memory.create_router(memories=runtime.memories, projects=runtime.projects),
        alerts.create_router(alert_actions(runtime)),
        questions.create_router(),
        admin.create_router(runtime.ops.audit),
        fallback.create_router(),
        clarify.create_fallback_router(),
    )
    dp.startup.register(_on_startup)
    return dp


async def _on_startup(bot: Bot, *, pictures: TreePictures) -> None:
    """The command menus: a courtesy, so a Telegram that keeps refusing them is one log
    line, not a failed start (transient errors are retried by the session first)."""
    try:
        async with asyncio.timeout(STARTUP_LIMIT_SEC):
            await bot.set_my_commands(common.COMMANDS)
            await bot.set_my_commands(common.RUSSIAN_COMMANDS, language_code="ru")
    except (TelegramAPIError, ClientDecodeError, TimeoutError) as e:
        log.error("could not set the bot's command menu (the bot runs without it): %s", e)
    if not pictures.available:
        log.warning("Graphviz (dot) is not installed: reasoning trees are sent as text")


#: How long start-up keeps retrying Telegram (setWebhook, the command menus).
STARTUP_LIMIT_SEC = 60.0


async def _resume_deep_jobs(
    bot: Bot,
    service: ReasoningService,
    links: TreeLinks,
    *,
    max_messages: int,
    charts: ReportCharts | None = None,
) -> None:
    """Unkeyed analyses (not started by an update) a dead process left running."""

    async def deliver(job: Job, answer: Answer) -> None:
        if job.user_id == ALERT_USER_ID or job.chat_id >= API_CHAT_BASE:
            # An alert's analysis is claimed again and posted by the alert workers; an API
            # job's client is gone with the process that ran it.
            log.info("deep-analysis job %s finished; not a Telegram question", job.id)
            return
        await send_answer(
            bot, job.chat_id, answer, links=links, max_messages=max_messages, charts=charts
        )

    resumed = await service.resume_deep_jobs(deliver)
    if resumed:
        log.info("resumed %d deep analyses left running by a dead process", resumed)


@asynccontextmanager
async def delivering_updates(
    runtime: Runtime, bot: Bot, dp: Dispatcher, *, bot_id: int
) -> AsyncIterator[InboxWorker]:
    """Replies through the outbox, the dispatcher's start-up hooks, the inbox worker
    running (claiming, answering, taking over what dead processes left) and the retention
    janitor, until exit; the exit drains: what the worker holds finishes, until the
    drain's deadline, or is handed back. `bot_id`: the bot's id as getMe gives it; its
    inbox holds its own updates only, and updates stored before they were kept per bot
    become its own."""
    delivery = runtime.settings.delivery
    inbox = PgInbox(runtime.pool, bot_id=bot_id)
    if adopted := await inbox.adopt_legacy():
        log.info(
            "%d updates stored before updates were kept per bot are bot %s's", adopted, bot_id
        )
    install_outbox(bot, runtime.outbox)
    worker = InboxWorker(
        inbox=inbox,
        leases=runtime.leases,
        dispatcher=dp,
        bot=bot,
        lease_sec=delivery.inbox_lease_sec,
        concurrency=delivery.inbox_concurrency,
        max_attempts=delivery.inbox_max_attempts,
        on_idle=partial(
            _resume_deep_jobs,
            bot,
            runtime.service,
            runtime.ops.links,
            max_messages=delivery.max_reply_messages,
            charts=runtime.charts,
        ),
        drain=runtime.drain,
    )
    janitor = Janitor(
        retention=PgRetention(runtime.pool),
        leases=runtime.leases,
        policy=retention_policy(delivery.inbox_retention_hours),
        owner=process_name(),
    )
    workflow = {"dispatcher": dp, "bots": [bot], **dp.workflow_data}
    await dp.emit_startup(bot=bot, **workflow)
    working = asyncio.create_task(worker.run())
    tasks = [working, asyncio.create_task(janitor.run())]
    try:
        yield worker
        runtime.drain.begin()  # the worker finishes what it holds, until the drain's deadline
        await asyncio.wait([working])
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await dp.emit_shutdown(bot=bot, **workflow)


def retention_policy(hours: float) -> RetentionPolicy:
    """INBOX_RETENTION_HOURS as the janitor's policy: a run every 5 minutes (or a twelfth
    of the horizon, when that is shorter)."""
    horizon = hours * 3600
    return RetentionPolicy(horizon_sec=horizon, every_sec=min(300.0, horizon / 12))


def webhook_app(
    runtime: Runtime, bot: Bot, dp: Dispatcher, worker: InboxWorker
) -> web.Application:
    """Telegram's webhook application (more routes may be added before it is served)."""
    url, secret = _webhook_settings(runtime.settings.telegram)
    return build_webhook_app(
        dispatcher=dp,
        bot=bot,
        inbox=worker.receiving,
        secret_token=secret,
        path=webhook_path(url),
        stored=worker.wake,
    )


async def serve_webhook(runtime: Runtime, bot: Bot, dp: Dispatcher, app: web.Application) -> None:
    """Serve the webhook app on WEBHOOK_LISTEN and setWebhook to WEBHOOK_URL; runs until
    the drain begins (or it is cancelled). Updates that come while the process drains are
    still stored, for the other replicas: only this one's worker stops taking them."""
    settings = runtime.settings
    url, secret = _webhook_settings(settings.telegram)
    host, port = settings.telegram.webhook_address
    async with serve(app, host=host, port=port):
        try:
            async with asyncio.timeout(STARTUP_LIMIT_SEC):
                await bot.set_webhook(
                    url,
                    secret_token=secret,
                    allowed_updates=dp.resolve_used_update_types(),
                )
        except (TelegramAPIError, ClientDecodeError, TimeoutError) as e:
            why = e.message if isinstance(e, TelegramAPIError) else type(e).__name__
            raise ConfigurationError(
                f"Telegram refused setWebhook for WEBHOOK_URL {url}: {why}"
            ) from e
        log.info("bot is receiving updates on %s", url)
        await runtime.drain.wait()


async def run_bot(settings: Settings, *, bot_id: int, webhook: bool = False) -> None:
    """Receive updates until SIGTERM or SIGINT: long polling, or the webhook (for replicas);
    the API and alert receiver on API_LISTEN (on the webhook's server when the address is
    the same). The first signal drains (bot/delivery/drain.py), the second stops at once.
    `bot_id`: the id getMe gave at start-up."""
    bot = build_bot(settings.telegram)
    try:
        async with open_runtime(settings) as runtime:
            dp = build_dispatcher(runtime)
            with stopped_by_signals(runtime.drain):
                await _receive(runtime, bot, dp, bot_id=bot_id, webhook=webhook)
        log.info("stopped: the work in flight was finished or handed back")
    finally:
        await bot.session.close()


async def _receive(
    runtime: Runtime, bot: Bot, dp: Dispatcher, *, bot_id: int, webhook: bool
) -> None:
    settings = runtime.settings
    async with (
        ops_server(
            runtime.ops,
            host=settings.observability.metrics_host,
            port=settings.observability.metrics_port,
            pages=runtime.pages,
        ),
        delivering_updates(runtime, bot, dp, bot_id=bot_id) as worker,
    ):
        app = webhook_app(runtime, bot, dp, worker) if webhook else None
        shared = app if app is not None and shares_webhook_server(settings) else None
        async with api_server(runtime, bot, shared=shared):
            if app is not None:
                await serve_webhook(runtime, bot, dp, app)
            else:
                log.info("bot is polling")
                await poll_into_inbox(
                    bot,
                    worker.receiving,
                    poll_sec=settings.telegram.polling_timeout_sec,
                    allowed_updates=dp.resolve_used_update_types(),
                    stored=worker.wake,
                    drain=runtime.drain,
                )


def shares_webhook_server(settings: Settings) -> bool:
    """Is API_LISTEN the webhook's own address (one server for both)?"""
    return (
        settings.api.listen is not None
        and parse_listen(settings.api.listen) == settings.telegram.webhook_address
    )


def _webhook_settings(telegram: TelegramSettings) -> tuple[str, str]:
    """WEBHOOK_URL and WEBHOOK_SECRET, which webhook mode needs."""
    if telegram.webhook_url is None or telegram.webhook_secret is None:
        raise ConfigurationError(
            "webhook mode needs WEBHOOK_URL (the public https URL Telegram calls) and "
            "WEBHOOK_SECRET (letters, digits, _ and -)"
        )
    return telegram.webhook_url, telegram.webhook_secret.get_secret_value()
