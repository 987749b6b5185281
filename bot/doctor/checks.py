"""`run_doctor`: every check, each bounded in time, in the order a question needs them."""

from __future__ import annotations

import asyncio

from bot.config import Settings
from bot.doctor.alertmanager import check_alertmanager
from bot.doctor.edge import check_edge
from bot.doctor.llm import check_llm
from bot.doctor.report import Finding
from bot.doctor.sources import check_port, check_runbooks, check_tools
from bot.wiring.api import alertmanager_client
from bot.wiring.app import Inspection, open_inspection
from reasoning_core import ProbeContext, RunbookSet, StoreError, kind_of, load_runbooks

DATABASE = "database"
#: How long one remote check may take: a hung server costs this, not a hang.
DEFAULT_LIMIT_SEC = 10.0


def configured_runbooks(settings: Settings) -> RunbookSet:
    """The runbooks the bot would load: RUNBOOKS_DIR's, and the shipped pack unless off."""
    deep = settings.deep
    return load_runbooks(deep.runbook_dirs, include_shipped=deep.runbooks_shipped)


async def run_doctor(settings: Settings, *, limit_sec: float = DEFAULT_LIMIT_SEC) -> list[Finding]:
    """Every check; never raises for a broken part (that is what the findings say)."""
    # The Telegram check needs aiogram and reports in this package's `Finding`: loaded here,
    # so that bot.telegram.doctor and bot.doctor never import each other at start-up.
    from bot.telegram.doctor import check_telegram  # noqa: PLC0415

    telegram, llm = await asyncio.gather(
        check_telegram(settings.telegram, limit_sec=limit_sec),
        check_llm(settings.llm, limit_sec=limit_sec),
    )
    findings = [*await _database_and_sources(settings, limit_sec), *telegram, *llm]
    observability = settings.observability
    findings.append(check_port(observability.metrics_host, observability.metrics_port))
    runbooks = await asyncio.to_thread(configured_runbooks, settings)
    findings.extend(check_edge(settings.api, runbooks.runbooks.keys()))
    findings.append(
        await check_alertmanager(alertmanager_client(settings.api), limit_sec=limit_sec)
    )
    return findings


async def _database_and_sources(settings: Settings, limit_sec: float) -> list[Finding]:
    try:
        async with asyncio.timeout(max(limit_sec, 60.0)):  # the embedded server may initdb
            async with open_inspection(settings) as inspection:
                return [_database(inspection), *await _sources(settings, inspection, limit_sec)]
    except StoreError as e:
        return [Finding.fail(DATABASE, str(e), "set DATABASE_URL to a reachable server")]
    except TimeoutError:
        return [Finding.fail(DATABASE, "did not answer in time", "check DATABASE_URL")]


def _database(inspection: Inspection) -> Finding:
    if inspection.read_only:
        return Finding.fail(
            DATABASE,
            f"{inspection.where} is read-only",
            "whytree writes sessions, trees and jobs: use a writable server and role",
        )
    if pending := inspection.pending_migrations:
        which = pending[0] if len(pending) == 1 else f"{pending[0]} … {pending[-1]}"
        return Finding.note(
            DATABASE,
            f"{inspection.where}: {len(pending)} migration(s) to apply at the next start "
            f"({which})",
            "every start applies them; `whytree migrate` does it now",
        )
    return Finding.ok(DATABASE, f"{inspection.where}, migrations current")


async def _sources(settings: Settings, inspection: Inspection, limit_sec: float) -> list[Finding]:
    runbooks = await asyncio.to_thread(configured_runbooks, settings)
    tools = inspection.tools
    later = {}
    if inspection.sql_after_migrations:
        later["sql"] = Finding.note(
            kind_of("sql").part,
            "runs as the reader role the migrations create: checked after the next start "
            "applies them",
        )
    context = ProbeContext(
        schemas=settings.tools.sql_schemas, limit_sec=limit_sec, problem=inspection.sql_problem
    )
    return [
        *await check_tools(tools, context, later=later),
        *await check_runbooks(runbooks, tools, limit_sec=limit_sec, after_migrations=set(later)),
    ]
