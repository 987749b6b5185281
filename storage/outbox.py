"""The outbox of replies in PostgreSQL (``outbox_messages``, migration 009).

A reply is written here before it is sent and marked sent as soon as Telegram
accepted it, with Telegram's answer. Its key names it (the update it answers and
its place among that update's replies), so when an update is processed again
after a crash, a reply already sent is not sent twice: its stored answer stands in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import asyncpg

from storage.errors import translated

OutboxStatus = Literal["pending", "sent", "failed"]

_BEGIN = """
    WITH added AS (
        INSERT INTO outbox_messages (key, chat_id, method, request)
        VALUES ($1, $2, $3, $4)
        ON CONFLICT (key) DO NOTHING
        RETURNING status, result)
    SELECT status, result FROM added
    UNION ALL
    SELECT status, result FROM outbox_messages WHERE key = $1
    LIMIT 1"""


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """Where a reply stands: pending (never confirmed sent), sent (with Telegram's
    answer) or failed (Telegram refused it for good)."""

    status: OutboxStatus
    result: Any = None


class PgOutbox:
    """The ``outbox_messages`` table; each method is one statement."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("writing a reply to the outbox")
    async def begin(
        self, key: str, *, chat_id: int | None, method: str, request: dict[str, Any]
    ) -> OutboxEntry:
        """Write the reply unless its key is there already; either way, where it stands."""
        row = await self._pool.fetchrow(_BEGIN, key, chat_id, method, request)
        assert row is not None
        return OutboxEntry(status=row["status"], result=row["result"])

    @translated("marking a reply sent")
    async def sent(self, key: str, result: Any) -> None:
        await self._pool.execute(
            """UPDATE outbox_messages SET status = 'sent', result = $2, sent_at = now(),
                                          attempts = attempts + 1, error = NULL
               WHERE key = $1""",
            key,
            result,
        )

    @translated("recording a failed send")
    async def attempt_failed(self, key: str, error: str, *, final: bool) -> None:
        """One more failed attempt; `final`: Telegram refused it for good."""
        await self._pool.execute(
            """UPDATE outbox_messages SET attempts = attempts + 1, error = $2,
                   status = CASE WHEN $3 THEN 'failed' ELSE status END
               WHERE key = $1""",
            key,
            error[:1000],
            final,
        )

    @translated("counting replies")
    async def counts(self) -> dict[str, int]:
        rows = await self._pool.fetch(
            "SELECT status, count(*) AS n FROM outbox_messages GROUP BY status"
        )
        return {r["status"]: r["n"] for r in rows}
