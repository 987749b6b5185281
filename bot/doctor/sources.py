"""The tool sources: SQL rights on the data schemas, Prometheus' v1 API, the runbooks and
their data, and the metrics port."""

from __future__ import annotations

import asyncio
import errno
import socket
from collections.abc import Mapping, Sequence, Set
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from bot.doctor.discovery import PART, discover_runbooks, off_findings, runbook_finding
from bot.doctor.report import Finding
from reasoning_core.errors import ToolError
from reasoning_core.logs import LogTool
from reasoning_core.runbooks import RunbookSet
from reasoning_core.runbooks.model import Runbook
from reasoning_core.tools.base import Tool, ToolRequest

SQL_TOOL = "SQL tool (TOOLS_SQL_DSN)"


@runtime_checkable
class RightsReader(Protocol):
    """The SQL tool's own catalogue look-up (storage/sql_tool.py: `PgSqlTool`)."""

    async def table_rights(self, schemas: Sequence[str]) -> list[tuple[str, int, int]]: ...


async def check_sql(
    tools: Mapping[str, Tool], problem: str | None, schemas: Sequence[str], *, limit_sec: float
) -> Finding:
    part = SQL_TOOL
    sql = tools.get("sql")
    if sql is None:
        return Finding.fail(part, f"cannot connect: {problem}", "check TOOLS_SQL_DSN")
    if not isinstance(sql, RightsReader):
        return Finding.ok(part, "configured (its rights are not readable here)")
    try:
        async with asyncio.timeout(limit_sec):
            rights = await sql.table_rights(schemas)
    except (ToolError, TimeoutError) as e:
        return Finding.fail(part, f"cannot read the catalogue: {e}", "check TOOLS_SQL_DSN")
    found = {schema: (tables, readable) for schema, tables, readable in rights}
    for schema in schemas:
        tables, readable = found.get(schema, (0, 0))
        if tables == 0:
            return Finding.fail(
                part,
                f"schema {schema} has no tables this role can see",
                f"load the data (`whytree demo`), or GRANT USAGE ON SCHEMA {schema}",
                required=False,
            )
        if readable < tables:
            return Finding.fail(
                part,
                f"may read {readable} of {tables} tables in schema {schema}",
                f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO the role of TOOLS_SQL_DSN",
            )
    return Finding.ok(part, f"reads every table of {', '.join(schemas)}")


async def check_prometheus(tools: Mapping[str, Tool], *, limit_sec: float) -> Finding:
    part = "Prometheus (PROMETHEUS_URL)"
    prometheus = tools.get("prometheus")
    if prometheus is None:
        return Finding.off(part, "not configured")
    result = await prometheus.run(ToolRequest(query="vector(1)", timeout_sec=limit_sec))
    if result.ok:
        return Finding.ok(part, "answers the v1 query API")
    return Finding.fail(
        part,
        f"does not answer Prometheus' HTTP API v1: {result.error}",
        "PROMETHEUS_URL is the server's root (http://host:9090), not a page or another API",
    )


async def check_pg_sessions(tools: Mapping[str, Tool]) -> Finding:
    """The monitored PostgreSQL's sessions: its fixed query answers, or why not."""
    part = "PostgreSQL sessions (TOOLS_PG_MONITOR_DSN)"
    sessions = tools.get("pg_sessions")
    if sessions is None:
        return Finding.off(part, "not configured: lock checks cannot name the blocking session")
    result = await sessions.run(ToolRequest(query="blockers"))
    if result.ok:
        return Finding.ok(part, f"answers; {result.row_count} session(s) wait for a lock now")
    return Finding.fail(
        part,
        result.error or "no answer",
        "a login with pg_monitor on the PostgreSQL the runbooks diagnose "
        "(CREATE ROLE … LOGIN IN ROLE pg_monitor)",
        required=False,
    )


async def check_logs(tools: Mapping[str, Tool], *, limit_sec: float) -> list[Finding]:
    """One line per log source: readable, with its lines of the last hour, or why not."""
    logs = tools.get("logs")
    if not isinstance(logs, LogTool):
        return []
    now = datetime.now(UTC)
    findings = []
    for name in logs.sources:
        result = await logs.run(
            ToolRequest(
                source=name, start=now - timedelta(hours=1), end=now, timeout_sec=limit_sec
            )
        )
        part = f"log source {name}"
        if not result.ok:
            findings.append(
                Finding.fail(
                    part,
                    result.error or "unreadable",
                    "check its paths, permissions, unit or URL in LOG_SOURCES (docs/logs.md)",
                    required=False,
                )
            )
            continue
        more = " or more" if result.truncated else ""
        findings.append(
            Finding.ok(part, f"readable, {result.row_count}{more} lines in the last hour")
        )
    return findings


async def check_runbooks(
    runbooks: RunbookSet,
    tools: Mapping[str, Tool],
    *,
    limit_sec: float,
    after_migrations: Set[str] = frozenset(),
) -> list[Finding]:
    """Each runbook: invalid, switched off by discovery, or its data's state. A runbook
    whose data source opens only after the pending migrations (`after_migrations`: the
    SQL tool's reader role) is said to be checked then."""
    findings = [
        Finding.fail(f"runbook {error.file}", "invalid, skipped", f"fix it: {error}"[:300])
        for error in runbooks.errors
    ]
    try:
        async with asyncio.timeout(limit_sec * 3):
            found, summary = await discover_runbooks(runbooks, tools)
    except TimeoutError:
        found = None
        summary = Finding.fail(
            PART, "Prometheus did not list its metrics in time", "check PROMETHEUS_URL",
            required=False,
        )  # fmt: skip
    if summary is not None:
        findings.append(summary)
    off = []
    for runbook in runbooks.runbooks.values():
        status = found.statuses.get(runbook.id) if found else None
        if status is not None and status.uses_metrics and not status.live:
            off.append(status)
        elif status is not None and status.uses_metrics:
            findings.append(runbook_finding(f"runbook {runbook.id}", status))
        elif (anchor := runbook.window.anchor) is not None and anchor.tool in after_migrations:
            findings.append(
                Finding.note(
                    f"runbook {runbook.id}",
                    f"valid; its data ({anchor.tool}) is checked after the next start applies "
                    "the migrations",
                )
            )
        else:
            findings.append(await _runbook_data(runbook, tools, limit_sec))
    return [*findings, *off_findings(off)]


async def _runbook_data(runbook: Runbook, tools: Mapping[str, Tool], limit_sec: float) -> Finding:
    part = f"runbook {runbook.id}"
    anchor = runbook.window.anchor
    if anchor is None:
        return Finding.ok(part, "valid (no anchor query: its window ends now)")
    tool = tools.get(anchor.tool)
    if tool is None:
        return Finding.fail(
            part,
            f"valid, but its data source ({anchor.tool}) is not configured",
            "configure the tool, or ignore it if you do not use this runbook",
            required=False,
        )
    result = await tool.run(ToolRequest(query=anchor.query, timeout_sec=limit_sec))
    first = next(iter(result.rows[0].values()), None) if result.rows else None
    if result.ok and first is not None:
        return Finding.ok(part, f"valid, data up to {first}")
    why = result.error if not result.ok else "its anchor query found no rows"
    return Finding.fail(
        part,
        f"valid, but its data is missing: {why}",
        "load the data (`whytree demo` for the shipped runbooks)",
        required=False,
    )


def check_port(host: str, port: int | None) -> Finding:
    part = "metrics port (METRICS_PORT)"
    if port is None:
        return Finding.off(part, "not configured: no /metrics, /healthz or analysis pages")
    if port == 0:
        return Finding.ok(part, "0: any free port is taken at start")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return Finding.fail(
                    part,
                    f"{host}:{port} is in use",
                    "stop what uses it (another whytree?) or choose another METRICS_PORT",
                )
            return Finding.fail(
                part, f"cannot listen on {host}:{port}: {e.strerror}", "check METRICS_HOST"
            )
    return Finding.ok(part, f"{host}:{port} is free")
