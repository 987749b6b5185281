"""The composition root: settings in, a wired runtime (service, stores, tools) out.

With bot/wiring/deep.py and bot/wiring/api.py, the only modules of `bot` that import
`storage`; the front ends run on the `Runtime` it opens (Telegram: bot/telegram/process.py;
the terminal chat: bot/terminal.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from bot.config import (
    LLMSettings,
    MemorySettings,
    Settings,
    StorageSettings,
    StrategySettings,
    ToolsSettings,
)
from bot.delivery.drain import Drain
from bot.delivery.limits import LeasedDeepSlots, SharedWindow
from bot.operations.billing import BilledTurnWriter
from bot.operations.metrics import Metrics
from bot.operations.ops import Ops, RunbookLibrary
from bot.trees.chart import TreeCharts
from bot.trees.page import AnalysisPages, TreeLinks
from bot.trees.picture import TreePictures
from bot.wiring.deep import log_news_reader, open_deep, open_tools
from bot.wiring.demo_prometheus import with_demo_prometheus
from bot.wiring.instrumented import InstrumentedChatModel, MeteredReasoningService
from reasoning_core.answers.deep_path import DeepPath
from reasoning_core.asking.condition import MAX_SERIES as CONDITION_SERIES
from reasoning_core.asking.condition import POINTS as CONDITION_POINTS
from reasoning_core.asking.condition import ConditionReader
from reasoning_core.changes.scan import POINTS, ScanLimits
from reasoning_core.changes.scanner import ChangeScanner
from reasoning_core.errors import StoreError
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.llm.pseudonyms import PseudonymizingChatModel
from reasoning_core.logs.news import LogNewsReader
from reasoning_core.memory.budget import ContextBudget
from reasoning_core.memory.long_term import LongTermMemory
from reasoning_core.memory.turn import SessionLimits, TurnLoader, TurnRecorder
from reasoning_core.ports import ChatModel, TreeJournal
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


def _condition_reader(
    tools: ToolsSettings, data_clock: Callable[[], datetime] | None
) -> ConditionReader | None:
    """An alert's condition re-read over PROMETHEUS_URL (None: no Prometheus)."""
    if not tools.prometheus_url:
        return None
    tool = PrometheusTool(
        tools.prometheus_url,
        max_series=CONDITION_SERIES,
        max_samples=CONDITION_SERIES * CONDITION_POINTS,
    )
    return ConditionReader(tool, clock=data_clock)


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
    #: Deep reports' charts, drawn for any channel (the Telegram side sends them after the
    #: report: bot/telegram/replies/report_chart.py).
    charts: TreeCharts
    journal: TreeJournal
    #: The analysis pages, served on METRICS_PORT; None without PUBLIC_URL.
    pages: AnalysisPages | None
    #: Exactly-once delivery: replies out, leases across replicas (the inbox is a bot's:
    #: `delivering_updates` opens it for the bot it is given).
    outbox: PgOutbox
    leases: PgLeases
    #: This process's stop: shared by everything that takes work (bot/delivery/drain.py).
    drain: Drain
    #: What retention deletes, for the janitor (bot/delivery/janitor.py).
    retention: PgRetention

    def inbox_for(self, bot_id: int) -> PgInbox:
        """The inbox of one bot's updates (`bot_id`: the id getMe gives)."""
        return PgInbox(self.pool, bot_id=bot_id)


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
                    conditions=_condition_reader(settings.tools, data_clock),
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
    conditions: ConditionReader | None = None,
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
        conditions=conditions,
    )
    pictures = TreePictures(timeout=settings.observability.tree_picture_timeout_sec)
    charts = TreeCharts(timeout=settings.observability.tree_picture_timeout_sec)
    journal = PgTreeJournal(pool)
    pages = None
    if ops.links.enabled:
        pages = AnalysisPages(
            links=ops.links,
            trees=ops.trees,
            journal=journal,
            pictures=pictures,
            charts=charts,
        )
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
        retention=PgRetention(pool),
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
