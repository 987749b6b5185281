"""Composition root, deep part: tools, planner, explorer, durable jobs.

The read-only SQL tool has its own pool on TOOLS_SQL_DSN (the bot's database
when unset); http_check and prometheus are added only when configured.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from bot.config import Settings
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.answers.deep_jobs import DeepJobRunner
from reasoning_core.answers.deep_path import DeepPath, Guidance
from reasoning_core.errors import ToolError
from reasoning_core.explore.budgets import Budgets
from reasoning_core.planners.llm.guidance import runbook_guidance
from reasoning_core.planners.llm.planner import LLMPlanner
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports import ChatModel, Planner
from reasoning_core.reflection.reflector import ReflectionSettings
from reasoning_core.runbooks import RunbookSet
from reasoning_core.tools.base import Tool
from reasoning_core.tools.http_check import HostAllowList, HttpCheckTool
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.understanding.catalogue import EntityCatalogue
from reasoning_core.understanding.request import Request
from storage.jobs import PgJobStore
from storage.sql_tool import PgSqlTool
from storage.tree_pages import PgTreeJournal
from storage.trees import PgTreeStore

log = logging.getLogger(__name__)

#: Schemas whose tables the LLM planner is shown (the demo-data contract).
DATA_SCHEMAS = ("demo",)


@asynccontextmanager
async def open_deep(
    settings: Settings,
    *,
    pool: asyncpg.Pool[Any],
    dsn: str,
    chat_model: ChatModel | None,
    runbooks: Callable[[], RunbookSet],
) -> AsyncIterator[tuple[DeepPath, EntityCatalogue]]:
    """The deep path: the LLM planner with the runbook planner as its fallback and
    runbooks as guidance, or the runbook planner alone when no LLM is configured;
    and the catalogue of the names the data knows, read through the same tools.

    `runbooks` is read on every use, so /reload_runbooks takes effect at once.
    """
    tools_dsn = settings.tools_sql_dsn.get_secret_value() if settings.tools_sql_dsn else dsn
    sql = await _connect_sql(settings, tools_dsn)
    try:
        tools = _tools(settings, sql)
        runbook = RunbookPlanner(runbooks, tools=tools)
        planner: Planner = runbook
        guidance: Guidance | None = None
        if chat_model is not None:
            schema = await _describe(sql)
            planner = LLMPlanner(chat_model, schema_description=schema, tools=tuple(tools))

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
            budgets=Budgets(deadline_sec=settings.deep_deadline_sec),
            concurrency=settings.reasoning_concurrency,
            reflection=ReflectionSettings(
                max_plan_revisions=settings.max_plan_revisions,
                reflection_every=settings.reflection_every,
            ),
            critic=chat_model,
            journal=PgTreeJournal(pool),
        )
        path = DeepPath(
            runner=DeepJobRunner(PgJobStore(pool), analyst),
            trees=trees,
            guidance=guidance,
            missing_details=runbook.clarifying_questions,
        )
        catalogue = EntityCatalogue(
            sources=lambda: runbooks().name_sources(),
            tools=tools,
            ttl_sec=settings.entity_names_ttl_sec,
        )
        yield path, catalogue
    finally:
        if sql is not None:
            await sql.close()


@asynccontextmanager
async def open_tools(
    settings: Settings, dsn: str
) -> AsyncIterator[tuple[dict[str, Tool], str | None]]:
    """The configured tools, and why the SQL tool is missing (None when it is there)."""
    tools_dsn = settings.tools_sql_dsn.get_secret_value() if settings.tools_sql_dsn else dsn
    sql: PgSqlTool | None = None
    problem: str | None = None
    try:
        sql = await PgSqlTool.connect(
            tools_dsn,
            statement_timeout_ms=settings.tools_sql_timeout_ms,
            max_rows=settings.tools_sql_max_rows,
        )
    except ToolError as e:
        problem = str(e)
    try:
        yield _tools(settings, sql), problem
    finally:
        if sql is not None:
            await sql.close()


async def _connect_sql(settings: Settings, dsn: str) -> PgSqlTool | None:
    try:
        return await PgSqlTool.connect(
            dsn,
            statement_timeout_ms=settings.tools_sql_timeout_ms,
            max_rows=settings.tools_sql_max_rows,
        )
    except ToolError as e:  # deep analysis goes on with the other tools
        log.error("the SQL tool is unavailable (TOOLS_SQL_DSN): %s", e)
        return None


def _tools(settings: Settings, sql: PgSqlTool | None) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    if sql is not None:
        tools["sql"] = sql
    if settings.tools_http_allow.strip():
        tools["http_check"] = HttpCheckTool(HostAllowList.parse(settings.tools_http_allow))
    if settings.prometheus_url:
        tools["prometheus"] = PrometheusTool(settings.prometheus_url)
    return tools


async def _describe(sql: PgSqlTool | None) -> str | None:
    if sql is None:
        return None
    try:
        return await sql.describe_schema(DATA_SCHEMAS)
    except ToolError as e:
        log.warning("could not describe the data schemas for the planner: %s", e)
        return None
