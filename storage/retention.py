"""Retention of delivery's records in PostgreSQL (migration 014): what is older than a
horizon goes, in bounded batches.

Processed updates (done, failed, rejected), replies that were sent or refused for good,
leases that ran out and rate-limit hits: each `purge_*` call deletes at most `limit` rows
older than `horizon_sec` in one statement, so a run never holds many locks or one long
transaction. Updates still waiting and replies never confirmed are kept.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from storage.errors import translated

#: Rows are picked by ctid (a TID scan deletes them): one statement per batch, whatever
#: the table's key.
_PURGE = {
    "updates": """SELECT ctid FROM inbox_updates WHERE status IN ('done', 'failed', 'rejected')
                  AND finished_at < now() - make_interval(secs => $1) LIMIT $2""",
    "replies": """SELECT ctid FROM outbox_messages WHERE status IN ('sent', 'failed')
                  AND created_at < now() - make_interval(secs => $1) LIMIT $2""",
    "leases": """SELECT ctid FROM leases
                 WHERE lease_until < now() - make_interval(secs => $1) LIMIT $2""",
    "rate hits": """SELECT ctid FROM rate_hits
                    WHERE at < now() - make_interval(secs => $1) LIMIT $2""",
}
_TABLES = {
    "updates": "inbox_updates",
    "replies": "outbox_messages",
    "leases": "leases",
    "rate hits": "rate_hits",
}


class PgRetention:
    """Deletes delivery's records older than a horizon, a batch per call."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("deleting old delivery records")
    async def purge(self, kind: str, *, horizon_sec: float, limit: int) -> int:
        """Delete at most `limit` rows of `kind` ("updates", "replies", "leases", "rate
        hits") older than the horizon; how many went."""
        status = await self._pool.execute(
            f"DELETE FROM {_TABLES[kind]} WHERE ctid = ANY(ARRAY({_PURGE[kind]}))",
            float(horizon_sec),
            limit,
        )
        return int(status.split()[-1])
