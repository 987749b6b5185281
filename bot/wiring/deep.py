"""Composition root, deep part: tools, planner, explorer, durable jobs.

The read-only SQL tool has its own pool: on TOOLS_SQL_DSN, or, when unset, on the
bot's database as the reader role (logged in as it, or switched to it per
transaction where the server wants a password). Either way its rights are audited
at start-up: a role that can write or read the bot's tables stops start-up unless
TOOLS_SQL_ALLOW_UNSAFE=true. http_check and prometheus are added only when configured.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from functools import partial
from typing import Any

import asyncpg

from bot.config import DeepSettings, ToolsSettings
from bot.wiring.discovery import LiveRunbooks
from logsources import open_log_sources, parse_log_sources
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.answers.deep_jobs import DeepJobRunner
from reasoning_core.answers.deep_path import DeepPath, Guidance
from reasoning_core.changes.scanner import ChangeScanner
from reasoning_core.errors import ConfigurationError, StoreError, ToolError
from reasoning_core.explore.budgets import Budgets
from reasoning_core.logs import LogTool
from reasoning_core.logs.news import LogNewsReader, NewsLimits
from reasoning_core.planners.agent import ToolAgent
from reasoning_core.planners.llm.guidance import runbook_guidance
from reasoning_core.planners.llm.planner import LLMPlanner, QueryGate
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.planners.runbook_first import ModelPlanner, RunbookFirstPlanner
from reasoning_core.ports import ChatModel, LogSource, Planner
from reasoning_core.reflection.reflector import ReflectionSettings
from reasoning_core.runbooks import RunbookSet
from reasoning_core.runbooks.discovery import CatalogueReader
from reasoning_core.runbooks.loader import match_runbook
from reasoning_core.tools.base import Tool
from reasoning_core.tools.http_check import HostAllowList, HttpCheckTool
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.tools.scrape_targets import ScrapeTargetsTool
from reasoning_core.tools.sql_check import refusal_reason
from reasoning_core.understanding.catalogue import EntityCatalogue
from reasoning_core.understanding.request import Request
from storage.jobs import PgJobStore
from storage.pg_sessions import PgSessionsTool
from storage.pool import redact_dsn
from storage.reader import READER_ROLE, grant_reader, own_tables, reader_dsn
from storage.sql_tool import PgSqlTool
from storage.tree_pages import PgTreeJournal
from storage.trees import PgTreeStore

log = logging.getLogger(__name__)


@asynccontextmanager
async def open_deep(
    deep: DeepSettings,
    tool_settings: ToolsSettings,
    *,
    heartbeat_sec: float,
    pool: asyncpg.Pool[Any],
    dsn: str,
    chat_model: ChatModel | None,
    runbooks: Callable[[], RunbookSet],
    data_clock: Callable[[], datetime] | None = None,
    changes: ChangeScanner | None = None,
) -> AsyncIterator[tuple[DeepPath, EntityCatalogue]]:
    """The deep path: the runbooks first and the model in addition (RunbookFirstPlanner,
    with the runbook planner as its fallback and runbooks as the model's guidance; the
    model's side is the LLM planner, or the agent planner when LLM_PLANNER=agent), or the
    runbook planner alone when no LLM is configured;
    and the catalogue of the names the data knows, read through the same tools. `changes`
    (the change scan) adds what changed first as candidates when a plan is revised.

    `runbooks` is read on every use, so /reload_runbooks takes effect at once; questions
    see only those live against Prometheus (bot/wiring/discovery.py). A running
    job's lease is renewed every `heartbeat_sec`. `data_clock` pins the moment the checks
    and the names are read at (a recorded Prometheus); None: now.
    """
    sql = await _sql_tool(tool_settings, pool, dsn)
    discovering: asyncio.Task[None] | None = None
    try:
        tools = _tools(tool_settings, sql)
        prometheus = tools.get("prometheus")
        found = LiveRunbooks(
            runbooks,
            prometheus if isinstance(prometheus, CatalogueReader) else None,
            ttl_sec=deep.runbook_discovery_ttl_sec,
        )
        await found.refresh()  # on start-up, then every TTL
        if changes is not None:
            changes.types = found.metric_types  # the metadata discovery already reads
        discovering = asyncio.create_task(found.run())
        loaded = runbooks
        runbooks = found.live
        runbook = (
            RunbookPlanner(runbooks, tools=tools, clock=data_clock, changes=changes)
            if data_clock is not None
            else RunbookPlanner(runbooks, tools=tools, changes=changes)
        )
        planner: Planner = runbook
        guidance: Guidance | None = None
        budgets = Budgets(deadline_sec=deep.deadline_sec, max_links=deep.link_depth)
        if chat_model is not None:
            schema = await _describe(sql)
            gate = partial(refusal_reason, schemas=tool_settings.sql_schemas)
            model = _model_planner(
                deep.llm_planner,
                chat_model,
                budgets=budgets,
                schema=schema,
                tools=tuple(tools),
                gates={"sql": gate},
            )
            planner = RunbookFirstPlanner(runbook, model)  # the runbooks decide, the model adds

            def guidance(request: Request, language: str) -> str | None:
                return runbook_guidance(
                    runbooks(), request, language="ru" if language == "ru" else "en"
                )

        trees = PgTreeStore(pool)
        analyst = DeepAnalyst(
            tree_store=trees,
            planner=planner,
            fallback_planner=runbook if planner is not runbook else None,
            tools=tools,
            budgets=budgets,
            model_concurrency=deep.model_concurrency,
            tool_concurrency=deep.tool_concurrency,
            reflection=ReflectionSettings(
                max_plan_revisions=deep.max_plan_revisions,
                reflection_every=deep.reflection_every,
            ),
            critic=chat_model,
            journal=PgTreeJournal(pool),
        )
        path = DeepPath(
            runner=DeepJobRunner(PgJobStore(pool), analyst, heartbeat_sec=heartbeat_sec),
            trees=trees,
            guidance=guidance,
            missing_details=runbook.clarifying_questions,
            switched_off=partial(switched_off, loaded, found),
        )
        catalogue = EntityCatalogue(
            sources=lambda: runbooks().name_sources(),
            tools=tools,
            ttl_sec=deep.entity_names_ttl_sec,
            moment=data_clock,
        )
        yield path, catalogue
    finally:
        if discovering is not None:
            discovering.cancel()
        if sql is not None:
            await sql.close()


def _model_planner(
    kind: str,
    chat_model: ChatModel,
    *,
    budgets: Budgets,
    schema: str | None,
    tools: tuple[str, ...],
    gates: dict[str, QueryGate],
) -> ModelPlanner:
    """The model's side beside the runbooks (LLM_PLANNER): the agent, which grows the tree
    through tool calls, or the LLM planner, which answers each step in JSON."""
    if kind == "agent":
        return ToolAgent(
            chat_model, budgets=budgets, schema_description=schema, tools=tools, query_gates=gates
        )
    return LLMPlanner(chat_model, schema_description=schema, tools=tools, query_gates=gates)


@asynccontextmanager
async def open_tools(
    tool_settings: ToolsSettings, dsn: str, pool: asyncpg.Pool[Any], *, sql: bool = True
) -> AsyncIterator[tuple[dict[str, Tool], str | None]]:
    """The tools as the deep path gets them (without the SQL tool when `sql` is false),
    and why the SQL tool is missing or refused (None when it is there or not asked for):
    for `whytree doctor`, which reports rather than stops."""
    opened: PgSqlTool | None = None
    problem: str | None = None
    if sql:
        try:
            opened = await _sql_tool(tool_settings, pool, dsn)
        except ConfigurationError as e:
            problem = str(e)
        if opened is None and problem is None:
            problem = "the SQL tool could not connect (TOOLS_SQL_DSN, or the reader role)"
    try:
        yield _tools(tool_settings, opened), problem
    finally:
        if opened is not None:
            await opened.close()


async def _sql_tool(
    tool_settings: ToolsSettings, pool: asyncpg.Pool[Any], dsn: str
) -> PgSqlTool | None:
    """The SQL tool on its least-privileged role, audited; None when it cannot connect."""
    if tool_settings.sql_dsn is not None:
        sql = await _connect_sql(tool_settings, tool_settings.sql_dsn.get_secret_value())
    else:
        sql = await _reader_sql(tool_settings, pool, dsn)
    if sql is None:
        return None
    try:
        await _audit(tool_settings, sql, pool)
    except BaseException:
        await sql.close()
        raise
    return sql


async def _reader_sql(
    tool_settings: ToolsSettings, pool: asyncpg.Pool[Any], dsn: str
) -> PgSqlTool | None:
    """The bot's database as the reader: its own login, else SET LOCAL ROLE per query."""
    try:
        await grant_reader(pool, tool_settings.sql_schemas)
    except StoreError as e:  # e.g. a data schema the bot's user does not own
        log.warning("could not grant %s the data schemas: %s", READER_ROLE, e)
    login = reader_dsn(dsn)
    if login is not None:
        sql = await _connect_sql(tool_settings, login, quiet=True)
        if sql is not None:
            return sql
    log.warning(
        "the SQL tool cannot log in as %s at DATABASE_URL; it switches to that role for "
        "each query instead (a TOOLS_SQL_DSN with its own read-only login is stronger)",
        READER_ROLE,
    )
    return await _connect_sql(tool_settings, dsn, role=READER_ROLE)


async def _connect_sql(
    tool_settings: ToolsSettings, dsn: str, *, role: str | None = None, quiet: bool = False
) -> PgSqlTool | None:
    try:
        return await PgSqlTool.connect(
            dsn,
            statement_timeout_ms=tool_settings.sql_timeout_ms,
            max_rows=tool_settings.sql_max_rows,
            schemas=tool_settings.sql_schemas,
            role=role,
        )
    except ToolError as e:  # deep analysis goes on with the other tools
        if not quiet:
            log.error("the SQL tool is unavailable (TOOLS_SQL_DSN): %s", e)
        return None


async def _audit(tool_settings: ToolsSettings, sql: PgSqlTool, pool: asyncpg.Pool[Any]) -> None:
    """Stop start-up when the tool's role can do more than read the data schemas."""
    try:
        role, problems = await sql.audit(await own_tables(pool))
    except (ToolError, StoreError) as e:
        raise ConfigurationError(f"TOOLS_SQL_DSN: {e}") from e
    if not problems:
        log.info("the SQL tool reads %s as %s", ", ".join(sql.schemas), role)
        return
    source = "the SQL tool"
    if tool_settings.sql_dsn is not None:
        source = f"TOOLS_SQL_DSN ({redact_dsn(tool_settings.sql_dsn.get_secret_value())})"
    summary = f"{source}: role {role} {'; '.join(problems)}"
    if tool_settings.sql_allow_unsafe:
        log.warning("%s — running anyway (TOOLS_SQL_ALLOW_UNSAFE=true)", summary)
        return
    raise ConfigurationError(
        f"{summary}. Use a role that may only SELECT the data schemas, "
        "or set TOOLS_SQL_ALLOW_UNSAFE=true to start anyway"
    )


def _tools(tool_settings: ToolsSettings, sql: PgSqlTool | None) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    if sql is not None:
        tools["sql"] = sql
    if tool_settings.http_allow.strip():
        tools["http_check"] = HttpCheckTool(HostAllowList.parse(tool_settings.http_allow))
    if tool_settings.prometheus_url:
        prometheus = PrometheusTool(tool_settings.prometheus_url)
        tools["prometheus"] = prometheus
        tools["scrape_targets"] = ScrapeTargetsTool(prometheus)
    if tool_settings.log_sources:
        tools["logs"] = LogTool(
            _log_sources(tool_settings),
            max_lines=tool_settings.log_max_lines,
            max_bytes=tool_settings.log_max_bytes,
            timeout_sec=tool_settings.log_read_timeout_sec,
        )
    if tool_settings.pg_monitor_dsn is not None:
        tools["pg_sessions"] = PgSessionsTool(tool_settings.pg_monitor_dsn.get_secret_value())
    return tools


def _log_sources(tool_settings: ToolsSettings) -> dict[str, LogSource]:
    if not tool_settings.log_sources:
        return {}
    return open_log_sources(
        parse_log_sources(tool_settings.log_sources), max_files=tool_settings.log_max_files
    )


def log_news_reader(
    tool_settings: ToolsSettings, data_clock: Callable[[], datetime] | None = None
) -> LogNewsReader | None:
    """What is new in the logs of LOG_SOURCES, bounded by LOG_MAX_* (None: no sources)."""
    sources = _log_sources(tool_settings)
    if not sources:
        return None
    limits = NewsLimits(
        max_lines=tool_settings.log_max_lines,
        max_bytes=tool_settings.log_max_bytes,
        timeout_sec=tool_settings.log_read_timeout_sec,
    )
    if data_clock is None:
        return LogNewsReader(sources, limits)
    return LogNewsReader(sources, limits, clock=data_clock)


async def _describe(sql: PgSqlTool | None) -> str | None:
    if sql is None:
        return None
    try:
        return await sql.describe_schema()
    except ToolError as e:
        log.warning("could not describe the data schemas for the planner: %s", e)
        return None


def switched_off(
    loaded: Callable[[], RunbookSet], found: LiveRunbooks, request: Request
) -> list[tuple[str, str]]:
    """The loaded runbooks discovery switched off that would fit `request`: their titles and
    the metrics this Prometheus lacks (bot/doctor says the same)."""
    discovery = found.discovery()
    if discovery is None:
        return []
    runbooks = loaded()
    fitting = []
    for status in discovery.off():
        runbook = runbooks.get(status.runbook)
        if runbook is not None and match_runbook(runbook, request) is not None:
            title = runbook.title.get(request.language)
            fitting.append((title, "; ".join(status.reasons)))
    return fitting
