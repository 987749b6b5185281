"""The `pg_sessions` tool's contract: the fixed queries it answers and the columns they give.

A runbook check names one of these (``tool: pg_sessions``, ``query: blockers``); the tool
(storage/pg_sessions.py) holds their SQL, so no text from a runbook, a question or a model
ever runs on the monitored database.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

SessionQuery = Literal["blockers", "sync_replication", "idle_clients"]
#: blockers: sessions waiting for a lock now, one row per (waiting, blocking) pair —
#: waiting_pid, waiting_seconds, waiting_query, blocking_pid, blocking_state,
#: blocking_application, blocking_xact_seconds, blocking_query, blocking_wait_type,
#: blocking_wait (the holder's own wait event, or null), blocking_client (its address).
#: sync_replication: one row — standby_names (synchronous_standby_names),
#: synchronous_commit, standbys and sync_standbys (pg_stat_replication's rows, and those
#: in sync or quorum state), connected (their application names and states) and
#: waiting_commits (sessions waiting on IPC SyncRep now).
#: idle_clients: the clients holding idle connections now, most first — application,
#: client (its address), role, idle (its idle sessions), idle_seconds (the longest idle),
#: sessions (every client session) and max_connections.
SESSION_QUERIES: Final[tuple[str, ...]] = get_args(SessionQuery)
#: The verdict rules that read each query's rows.
QUERY_RULES: Final[dict[str, tuple[str, ...]]] = {
    "blockers": ("blocking_session", "idle_holder", "long_holder", "server_answers"),
    "sync_replication": ("sync_standby",),
    "idle_clients": ("idle_clients",),
}
assert set(QUERY_RULES) == set(SESSION_QUERIES), "every named query has its rules"
