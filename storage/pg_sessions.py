"""The `pg_sessions` tool: what the monitored PostgreSQL's sessions are doing now.

An engineer who reads "process 4242 still waiting for ShareLock" in PostgreSQL's log asks
the server next: who holds the lock, and what is it running? The log cannot say (the
holder's statement was never logged); `pg_stat_activity` and `pg_blocking_pids()` can.

This tool runs only the fixed queries named in `reasoning_core.tools.pg_sessions` — never text
from a runbook, a question or a model — on its own connection (TOOLS_PG_MONITOR_DSN: a role
with `pg_monitor` is enough, no superuser), inside a READ ONLY transaction with a
transaction-local `statement_timeout`, at most `max_rows` rows. Statements are masked
(passwords, tokens) before they leave. Failures come back as ``ToolResult(ok=False)`` with a
message safe to show: "database sessions unavailable: …", never the DSN.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import asyncpg

from reasoning_core import SESSION_QUERIES, ToolErrorKind, ToolRequest, ToolResult, mask_line
from storage.pool import CONNECTION_ERRORS

#: Sessions waiting for a lock now, each with a session that blocks it: its state, how long
#: its transaction has been open, its statement (the last one, for an idle one) and what it
#: waits for itself (its wait event), if anything.
_BLOCKERS_SQL = """
SELECT w.pid AS waiting_pid,
       extract(epoch FROM clock_timestamp() - w.query_start)::float8 AS waiting_seconds,
       left(w.query, $2) AS waiting_query,
       b.pid AS blocking_pid,
       b.state AS blocking_state,
       b.application_name AS blocking_application,
       host(b.client_addr) AS blocking_client,
       extract(epoch FROM clock_timestamp() - b.xact_start)::float8 AS blocking_xact_seconds,
       left(b.query, $2) AS blocking_query,
       b.wait_event_type AS blocking_wait_type,
       b.wait_event AS blocking_wait
FROM pg_catalog.pg_stat_activity w
CROSS JOIN LATERAL unnest(pg_catalog.pg_blocking_pids(w.pid)) AS held(pid)
JOIN pg_catalog.pg_stat_activity b ON b.pid = held.pid
WHERE w.wait_event_type = 'Lock'
ORDER BY b.xact_start NULLS LAST, w.query_start
LIMIT $1
"""

#: Does PostgreSQL wait for a synchronous standby? Its setting, the standbys it sees and
#: the sessions waiting on SyncRep now; one row ($1 and $2 bound like every query's).
_SYNC_REPLICATION_SQL = """
SELECT current_setting('synchronous_standby_names') AS standby_names,
       current_setting('synchronous_commit') AS synchronous_commit,
       (SELECT count(*) FROM pg_catalog.pg_stat_replication)::int AS standbys,
       (SELECT count(*) FROM pg_catalog.pg_stat_replication
         WHERE sync_state IN ('sync', 'quorum'))::int AS sync_standbys,
       (SELECT left(string_agg(coalesce(application_name, '?') || ' ' || coalesce(state, '?')
                    || ' ' || coalesce(sync_state, '?'), ', '), $2)
          FROM pg_catalog.pg_stat_replication) AS connected,
       (SELECT count(*) FROM pg_catalog.pg_stat_activity
         WHERE wait_event_type = 'IPC' AND wait_event = 'SyncRep')::int AS waiting_commits
LIMIT $1
"""

#: Who holds the idle connections: the client sessions that are idle (in a transaction or
#: not) now, by application, address and role, most first, with every client session's
#: count and max_connections beside them ($2 bounds the application's name).
_IDLE_CLIENTS_SQL = """
SELECT left(coalesce(nullif(a.application_name, ''), '?'), $2) AS application,
       host(a.client_addr) AS client,
       a.usename::text AS role,
       count(*)::int AS idle,
       max(extract(epoch FROM clock_timestamp() - a.state_change))::float8 AS idle_seconds,
       (SELECT count(*) FROM pg_catalog.pg_stat_activity
         WHERE backend_type = 'client backend')::int AS sessions,
       current_setting('max_connections')::int AS max_connections
FROM pg_catalog.pg_stat_activity a
WHERE a.backend_type = 'client backend'
  AND a.state IN ('idle', 'idle in transaction', 'idle in transaction (aborted)')
  AND a.pid <> pg_catalog.pg_backend_pid()
GROUP BY 1, 2, 3
ORDER BY 4 DESC, 1
LIMIT $1
"""

_SQL: dict[str, str] = {
    "blockers": _BLOCKERS_SQL,
    "sync_replication": _SYNC_REPLICATION_SQL,
    "idle_clients": _IDLE_CLIENTS_SQL,
}
assert set(_SQL) == set(SESSION_QUERIES), "every named query has its SQL"

#: Characters of a statement kept (PostgreSQL's own track_activity_query_size is 1024).
STATEMENT_CHARS = 1000
_UNREACHABLE: tuple[type[BaseException], ...] = (*CONNECTION_ERRORS, asyncpg.InterfaceError)
_TEXT_COLUMNS = (
    "waiting_query",
    "blocking_query",
    "blocking_application",
    "connected",
    "application",
)


class PgSessionsTool:
    """The fixed session queries against one PostgreSQL; implements the `Tool` port."""

    name = "pg_sessions"

    def __init__(
        self,
        dsn: str,
        *,
        statement_timeout_ms: int = 3000,
        connect_timeout_sec: float = 5.0,
        max_rows: int = 20,
    ) -> None:
        self._dsn = dsn
        self._timeout_ms = statement_timeout_ms
        self._connect_timeout = connect_timeout_sec
        self._max_rows = max_rows

    async def run(self, request: ToolRequest) -> ToolResult:
        started = time.monotonic()
        sql = _SQL.get(request.query or "")
        if sql is None:
            known = ", ".join(sorted(_SQL))
            return ToolResult.failure(
                self.name, "refused", f"no such session query: {request.query!r} (known: {known})"
            )
        limit = min(request.max_rows or self._max_rows, self._max_rows)
        try:
            records = await self._fetch(sql, limit)
        except asyncpg.PostgresError as e:
            kind: ToolErrorKind = (
                "timeout" if isinstance(e, asyncpg.QueryCanceledError) else "failed"
            )
            return ToolResult.failure(
                self.name,
                kind,
                f"database sessions unavailable: {_first_line(e)}",
                elapsed_ms=_ms(started),
            )
        except TimeoutError:
            return ToolResult.failure(
                self.name,
                "timeout",
                "database sessions unavailable: no answer in time",
                elapsed_ms=_ms(started),
            )
        except _UNREACHABLE:
            return ToolResult.failure(
                self.name,
                "unavailable",
                "database sessions unavailable: cannot connect",
                elapsed_ms=_ms(started),
            )
        rows = [_masked(dict(r)) for r in records]
        return ToolResult(
            tool=self.name, ok=True, rows=rows, row_count=len(rows), elapsed_ms=_ms(started)
        )

    async def _fetch(self, sql: str, limit: int) -> list[asyncpg.Record]:
        async with asyncio.timeout(self._connect_timeout + self._timeout_ms / 1000 + 2):
            conn = await asyncpg.connect(self._dsn, timeout=self._connect_timeout)
            try:
                async with conn.transaction(readonly=True):
                    await conn.execute(
                        "SELECT set_config('statement_timeout', $1, true)", str(self._timeout_ms)
                    )
                    return await conn.fetch(sql, limit, STATEMENT_CHARS)
            finally:
                await conn.close(timeout=2)


def _masked(row: dict[str, Any]) -> dict[str, Any]:
    for column in _TEXT_COLUMNS:
        if isinstance(row.get(column), str):
            row[column] = mask_line(row[column])
    return row


def _first_line(e: asyncpg.PostgresError) -> str:
    """PostgreSQL's own message ("sorry, too many clients already"), never a class name."""
    first = next(iter(str(e).splitlines()), "") or "the server refused the query"
    return mask_line(first)


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
