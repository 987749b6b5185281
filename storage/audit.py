"""The audit trail of admin actions: the ``audit_entries`` table, append-only."""

from __future__ import annotations

from typing import Any

import asyncpg

from reasoning_core import AuditEntry
from storage.errors import translated

_MAX_TEXT = 500  # an argument string is user input: keep rows small


class PgAuditStore:
    """`AuditStore` on PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("recording an admin action")
    async def record(self, entry: AuditEntry) -> int:
        """Append one entry (arguments and outcome cut to 500 characters); returns its id."""
        entry_id: int = await self._pool.fetchval(
            """INSERT INTO audit_entries (admin_id, chat_id, action, args, outcome)
               VALUES ($1, $2, $3, $4, $5) RETURNING id""",
            entry.admin_id,
            entry.chat_id,
            entry.action,
            entry.args[:_MAX_TEXT],
            entry.outcome[:_MAX_TEXT],
        )
        return entry_id

    @translated("reading the audit trail")
    async def recent(self, limit: int) -> list[AuditEntry]:
        """The newest entries first."""
        rows = await self._pool.fetch(
            """SELECT id, admin_id, chat_id, action, args, outcome, created_at
               FROM audit_entries ORDER BY created_at DESC, id DESC LIMIT $1""",
            max(limit, 0),
        )
        return [AuditEntry(**dict(r)) for r in rows]
