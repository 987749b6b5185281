"""SQL checks: a read-only template with named parameters, bound as `$n` arguments."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from reasoning_core.errors import ToolError
from reasoning_core.runbooks.kinds.base import (
    Bound,
    CheckFields,
    CheckKind,
    KindError,
    Probe,
    ProbeContext,
)
from reasoning_core.runbooks.sqltext import (
    compile_sql,
    ensure_read_only,
    mask_sql,
    sql_parameter_names,
)
from reasoning_core.tools.base import Tool, ToolRequest

_POSITIONAL = re.compile(r"\$(\d+)(?!\d)")


@runtime_checkable
class RightsReader(Protocol):
    """The SQL tool's own catalogue look-up (storage/sql_tool.py: `PgSqlTool`): per data
    schema, its tables and how many of them the role may read."""

    async def table_rights(self, schemas: Sequence[str]) -> list[tuple[str, int, int]]: ...


def bind_sql(template: str, values: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """asyncpg-ready SQL and its arguments; times and intervals travel as cast text
    (``$n::text::timestamptz``), since the explorer stores each request as JSON and runs
    it from there, also after a restart. SQLTemplateError for a value that cannot go."""
    compiled = compile_sql(template)
    args = compiled.args(dict(values))
    casts: dict[int, str] = {}
    sent: list[Any] = []
    for i, value in enumerate(args, start=1):
        if isinstance(value, datetime):
            casts[i] = "::text::timestamptz"
            sent.append(value.isoformat())
        elif isinstance(value, timedelta):
            casts[i] = "::text::interval"
            sent.append(f"{value.total_seconds():g} seconds")
        else:
            sent.append(value)
    masked = mask_sql(compiled.sql)  # literals blanked: only real placeholders match
    out, last = [], 0
    for m in _POSITIONAL.finditer(masked):
        out += [compiled.sql[last : m.end()], casts.get(int(m.group(1)), "")]
        last = m.end()
    out.append(compiled.sql[last:])
    return "".join(out), sent


class SqlKind(CheckKind):
    name = "sql"
    lookups = True
    part = "SQL tool (TOOLS_SQL_DSN)"

    def check_query(self, query: str) -> None:
        ensure_read_only(query)

    def validate(self, check: CheckFields) -> None:
        super().validate(check)
        if not check.query:
            raise KindError("query", "a sql check needs a query")

    def parameter_names(self, check: CheckFields) -> list[str]:
        return sql_parameter_names(check.query or "")

    def request(self, check: CheckFields, bound: Bound) -> ToolRequest:
        sql, args = bind_sql(check.query or "", bound.values)
        return ToolRequest(query=sql, params=args, max_rows=bound.max_rows)

    def lookup_request(self, query: str, params: Mapping[str, Any]) -> ToolRequest:
        sql, args = bind_sql(query, params)
        return ToolRequest(query=sql, params=args, max_rows=1)

    def lookup_parameter_names(self, query: str) -> list[str]:
        return sql_parameter_names(query)

    def absent(self, context: ProbeContext) -> Probe:
        why = context.problem or "not configured"
        detail = f"cannot connect: {why}"
        return Probe(part=self.part, state="fail", detail=detail, fix="check TOOLS_SQL_DSN")

    async def probe(self, tool: Tool, context: ProbeContext) -> list[Probe]:
        """The role reads every table of the data schemas, or which grant is missing."""
        if not isinstance(tool, RightsReader):
            detail = "configured (its rights are not readable here)"
            return [Probe(part=self.part, state="ok", detail=detail)]
        try:
            async with asyncio.timeout(context.limit_sec):
                rights = await tool.table_rights(context.schemas)
        except (ToolError, TimeoutError) as e:
            detail = f"cannot read the catalogue: {e}"
            return [Probe(part=self.part, state="fail", detail=detail, fix="check TOOLS_SQL_DSN")]
        found = {schema: (tables, readable) for schema, tables, readable in rights}
        for schema in context.schemas:
            tables, readable = found.get(schema, (0, 0))
            if tables == 0:
                fix = f"load the data (`whytree demo`), or GRANT USAGE ON SCHEMA {schema}"
                detail = f"schema {schema} has no tables this role can see"
                return [
                    Probe(part=self.part, state="fail", detail=detail, fix=fix, required=False)
                ]
            if readable < tables:
                fix = f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO the role of TOOLS_SQL_DSN"
                detail = f"may read {readable} of {tables} tables in schema {schema}"
                return [Probe(part=self.part, state="fail", detail=detail, fix=fix)]
        detail = f"reads every table of {', '.join(context.schemas)}"
        return [Probe(part=self.part, state="ok", detail=detail)]
