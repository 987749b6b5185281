"""SQL checks: a read-only template with named parameters, bound as `$n` arguments."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from reasoning_core.runbooks.kinds.base import Bound, CheckFields, CheckKind, KindError
from reasoning_core.runbooks.sqltext import (
    compile_sql,
    ensure_read_only,
    mask_sql,
    sql_parameter_names,
)
from reasoning_core.tools.base import ToolRequest

_POSITIONAL = re.compile(r"\$(\d+)(?!\d)")


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
