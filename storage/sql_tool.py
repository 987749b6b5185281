"""The `sql` tool: read-only queries on a separate pool (TOOLS_SQL_DSN).

Four fences keep it read-only and bounded: PostgreSQL's own grammar admits only
one SELECT over the data schemas with allowed functions
(`reasoning_core.tools.sql_check`); the pool logs in as the reader role (or,
with `role`, switches to it for each transaction) that may only SELECT the data
schemas (storage/reader.py); every query runs inside a READ ONLY transaction
with a transaction-local `statement_timeout`; and at most `max_rows + 1` rows
are fetched through a cursor (the extra row tells us the result was truncated).
Values are bound, never formatted into the SQL. Driver errors become
``ToolResult(ok=False)`` with a message safe for users; a missing table or
column reads "data source lacks ...".
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

import asyncpg

from reasoning_core import (
    SqlRefusedError,
    SqlSyntaxError,
    SqlTextError,
    ToolError,
    ToolErrorKind,
    ToolRequest,
    ToolResult,
    bind_named,
    check_select,
)
from storage.pool import CONNECTION_ERRORS, redact_dsn
from storage.reader import AUDIT_SQL, POWERFUL_ROLES, audit_problems

#: The data schemas when none are configured (TOOLS_SQL_SCHEMAS).
DEFAULT_SCHEMAS = ("demo",)

_CONNECT_ERRORS: tuple[type[BaseException], ...] = (*CONNECTION_ERRORS, asyncpg.PostgresError)
_MISSING = re.compile(r'^(relation|column|schema|function)\s+"?(.+?)"?\s+does not exist')
_MISSING_WHAT = {
    "relation": "table",
    "column": "column",
    "schema": "schema",
    "function": "function",
}

_DESCRIBE_SQL = """
SELECT n.nspname AS schema, c.relname AS table, a.attname AS column,
       format_type(a.atttypid, a.atttypmod) AS type
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
ORDER BY n.nspname, c.relname, a.attnum
"""


class PgSqlTool:
    """Read-only SQL against PostgreSQL; implements the `Tool` port."""

    name = "sql"

    def __init__(
        self,
        pool: asyncpg.Pool[Any],
        *,
        statement_timeout_ms: int = 5000,
        max_rows: int = 200,
        acquire_timeout_sec: float = 5.0,
        owns_pool: bool = False,
        schemas: Sequence[str] = DEFAULT_SCHEMAS,
        role: str | None = None,
    ) -> None:
        self._pool = pool
        self.schemas = tuple(schemas)
        self._role = role
        self._timeout_ms = statement_timeout_ms
        self._max_rows = max_rows
        self._acquire_timeout = acquire_timeout_sec
        self._owns_pool = owns_pool

    @classmethod
    async def connect(
        cls,
        dsn: str,
        *,
        statement_timeout_ms: int = 5000,
        max_rows: int = 200,
        pool_size: int = 4,
        schemas: Sequence[str] = DEFAULT_SCHEMAS,
        role: str | None = None,
    ) -> PgSqlTool:
        """Open the tool's own pool; an unreachable server raises ToolError naming it.

        With `role`, every transaction first switches to that role (SET LOCAL ROLE).
        """
        try:
            pool: asyncpg.Pool[Any] = await asyncpg.create_pool(
                dsn, min_size=1, max_size=pool_size, timeout=10.0
            )
        except _CONNECT_ERRORS as e:
            raise ToolError(
                f"cannot reach the SQL data source TOOLS_SQL_DSN ({redact_dsn(dsn)}): {e}"
            ) from e
        return cls(
            pool,
            statement_timeout_ms=statement_timeout_ms,
            max_rows=max_rows,
            owns_pool=True,
            schemas=schemas,
            role=role,
        )

    async def close(self) -> None:
        """Close the pool if this tool opened it."""
        if self._owns_pool:
            await self._pool.close()

    async def run(self, request: ToolRequest) -> ToolResult:
        """Run one read-only query; every failure comes back as ``ok=False``."""
        started = time.perf_counter()
        try:
            sql, args = _prepare(request, self.schemas)
        except _Refusal as e:
            return ToolResult.failure(self.name, e.kind, str(e))
        timeout_ms = int(request.timeout_sec * 1000) if request.timeout_sec else self._timeout_ms
        limit = request.max_rows or self._max_rows
        try:
            columns, records = await self._fetch(sql, args, timeout_ms, limit + 1)
        except _Refusal as e:
            return ToolResult.failure(self.name, e.kind, str(e), elapsed_ms=_ms(started))
        truncated = len(records) > limit
        rows = [{c: jsonable(v) for c, v in zip(columns, r, strict=True)} for r in records[:limit]]
        return ToolResult(
            tool=self.name,
            ok=True,
            rows=rows,
            data={"columns": columns},
            row_count=len(rows),
            truncated=truncated,
            truncation_note=f"result cut to the first {limit} rows" if truncated else None,
            elapsed_ms=_ms(started),
        )

    async def describe_schema(self, schemas: Sequence[str] | None = None) -> str:
        """The tables and columns the model may query, one line per table."""
        schemas = self.schemas if schemas is None else schemas
        try:
            _, records = await self._fetch(
                _DESCRIBE_SQL, [list(schemas)], self._timeout_ms, 10_000
            )
        except _Refusal as e:
            raise ToolError(f"cannot describe the SQL data source: {e}") from e
        tables: dict[str, list[str]] = {}
        for schema, table, column, type_ in records:
            tables.setdefault(f"{schema}.{table}", []).append(f"{column} {type_}")
        if not tables:
            return f"No tables in schema(s) {', '.join(schemas)}."
        lines = ["Tables you may query (read-only SQL, PostgreSQL):"]
        lines += [f"- {name}({', '.join(cols)})" for name, cols in tables.items()]
        return "\n".join(lines)

    async def table_rights(self, schemas: Sequence[str]) -> list[tuple[str, int, int]]:
        """(schema, tables, tables this role may SELECT) for each schema that has any.

        Trusted catalogue SQL of our own, run as the tool runs (for `whytree doctor`); it
        does not pass the gate that model-written SQL passes."""
        try:
            _, records = await self._fetch(_RIGHTS_SQL, [list(schemas)], self._timeout_ms, 1000)
        except _Refusal as e:
            raise ToolError(f"cannot read the SQL tool's rights: {e}") from e
        return [(str(s), int(n), int(r)) for s, n, r in records]

    async def audit(self, own_tables: Sequence[str]) -> tuple[str, list[str]]:
        """The tool's database role and what it may do beyond reading (empty: read-only).

        Runs as the tool runs (same pool, same role switch), so it sees what a query sees.
        """
        try:
            columns, records = await self._fetch(
                AUDIT_SQL, [list(own_tables), list(POWERFUL_ROLES)], self._timeout_ms, 1
            )
        except _Refusal as e:
            raise ToolError(f"cannot check what the SQL tool's role may do: {e}") from e
        row = dict(zip(columns, records[0], strict=True))
        return str(row["role"]), audit_problems(row)

    async def _fetch(
        self, sql: str, args: Sequence[Any], timeout_ms: int, n: int
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        # The client-side deadline is a backstop; the server's timeout fires first. A check
        # waits in line for a connection as long as its statement may run, at least
        # `acquire_timeout`: ten analyses at once on a small pool wait, they do not fail.
        wait = max(self._acquire_timeout, timeout_ms / 1000)
        try:
            async with (
                asyncio.timeout(timeout_ms / 1000 + wait + 2),
                self._pool.acquire(timeout=wait) as conn,
                conn.transaction(readonly=True),
            ):
                await conn.execute(_SETUP_SQL, str(timeout_ms), self._role or "")
                statement = await conn.prepare(sql)
                columns = [a.name for a in statement.get_attributes()]
                records = await (await statement.cursor(*args)).fetch(n)
                return columns, [tuple(r.values()) for r in records]
        except asyncpg.PostgresError as e:
            kind, message = _translate(e, timeout_ms)
            raise _Refusal(kind, message) from e
        except TimeoutError as e:
            raise _Refusal("timeout", f"query timed out after {timeout_ms} ms") from e
        except asyncpg.InterfaceError as e:
            if isinstance(e, ValueError):  # asyncpg could not encode an argument
                raise _Refusal("failed", f"a parameter does not fit the query: {e}") from e
            raise _Refusal("unavailable", "the SQL data source is unavailable") from e
        except CONNECTION_ERRORS as e:
            raise _Refusal("unavailable", "the SQL data source is unavailable") from e


#: Tables of the data schemas, and how many of them this role may read.
_RIGHTS_SQL = """
SELECT n.nspname AS schema,
       count(c.oid) AS tables,
       count(c.oid) FILTER (WHERE has_table_privilege(c.oid, 'SELECT')) AS readable
FROM pg_catalog.pg_namespace n
LEFT JOIN pg_catalog.pg_class c
       ON c.relnamespace = n.oid AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
WHERE n.nspname = ANY($1::text[])
GROUP BY n.nspname
"""

#: Per transaction: the timeout, and the reader role when the pool logs in as another user.
_SETUP_SQL = """
SELECT set_config('statement_timeout', $1, true),
       CASE WHEN $2 <> '' THEN set_config('role', $2, true) END
"""


class _Refusal(Exception):
    def __init__(self, kind: ToolErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ToolErrorKind = kind


def _prepare(request: ToolRequest, schemas: Sequence[str]) -> tuple[str, list[Any]]:
    """The SQL and its arguments, once the SQL gate has let the query through."""
    sql = (request.query or "").strip()
    if not sql:
        raise _Refusal("syntax", "the sql tool needs a query")
    args: list[Any] = list(request.params) if isinstance(request.params, list) else []
    if isinstance(request.params, dict):
        try:
            sql, args = bind_named(sql, request.params)
        except SqlTextError as e:
            raise _Refusal("syntax", str(e)) from e
    try:
        check_select(sql, schemas=schemas)
    except SqlSyntaxError as e:
        raise _Refusal("syntax", str(e)) from e
    except SqlRefusedError as e:
        raise _Refusal("refused", f"refused: the sql tool runs one read-only SELECT: {e}") from e
    return sql, args


def _translate(e: asyncpg.PostgresError, timeout_ms: int) -> tuple[ToolErrorKind, str]:
    """Map a PostgreSQL error (by SQLSTATE) to a kind and a user-safe message."""
    message = getattr(e, "message", None) or str(e)
    state = getattr(e, "sqlstate", None) or ""
    if state in {"42P01", "42703", "3F000", "42883"}:
        m = _MISSING.match(message)
        what = f"{_MISSING_WHAT[m.group(1)]} {m.group(2)}" if m else message
        return "missing", f"data source lacks {what}"
    if state == "25006":
        return "refused", f"refused: the sql tool is read-only ({message})"
    if state == "57014":
        return "timeout", f"query timed out after {timeout_ms} ms (statement_timeout)"
    if state == "42501":
        return "refused", f"refused: {message}"
    if state.startswith("42"):
        return "syntax", f"SQL error: {message}"
    return "failed", f"query failed: {message}"


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def jsonable(value: Any) -> Any:
    """A driver value as plain JSON data (dates as ISO text, Decimal as float)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    for types, convert in _CONVERTERS:
        if isinstance(value, types):
            return convert(value)
    return str(value)


_CONVERTERS: tuple[tuple[type | tuple[type, ...], Callable[[Any], Any]], ...] = (
    ((datetime, date), lambda v: v.isoformat()),
    (Decimal, lambda v: jsonable(float(v))),
    (timedelta, lambda v: v.total_seconds()),
    (UUID, str),
    ((bytes, bytearray, memoryview), lambda v: bytes(v).hex()),
)
