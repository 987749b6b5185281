"""The inbox of Telegram updates in PostgreSQL (``inbox_updates``, migration 009).

An update is stored before it is acknowledged, keyed by its update_id (a second
delivery of the same update is a no-op). Processes claim updates with
``FOR UPDATE SKIP LOCKED`` under a lease of a few seconds they keep renewing; an
update whose lease ran out (its process died) is claimed again by any process.
An update claimed more than `max_attempts` times is a poison update: it comes back
once more, flagged, so its processor can tell the user, and is then failed.
Times are the database's clock, never the workers'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg

from storage.errors import translated

_COLUMNS = "update_id, payload, chat_id, status, attempts, error"

_CLAIM = f"""
    UPDATE inbox_updates SET status = 'processing', attempts = attempts + 1, owner = $1,
                             lease_until = now() + make_interval(secs => $2)
    WHERE update_id = (
        SELECT update_id FROM inbox_updates
        WHERE (status = 'pending' AND (lease_until IS NULL OR lease_until < now()))
           OR (status = 'processing' AND lease_until < now())
        ORDER BY received_at, update_id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
    )
    RETURNING {_COLUMNS}"""


#: Store an update and, unless older updates wait, claim it for $4 in the same statement
#: (the process that received it answers it at once: no claim round trip). A
#: redelivery returns nothing.
_ADD_CLAIMED = f"""
    INSERT INTO inbox_updates (update_id, payload, chat_id, status, attempts, owner, lease_until)
    SELECT $1, $2, $3,
           CASE WHEN c.take THEN 'processing' ELSE 'pending' END,
           CASE WHEN c.take THEN 1 ELSE 0 END,
           CASE WHEN c.take THEN $4 END,
           CASE WHEN c.take THEN now() + make_interval(secs => $5) END
    FROM (SELECT NOT EXISTS (
              SELECT 1 FROM inbox_updates
              WHERE status = 'pending' AND (lease_until IS NULL OR lease_until < now())
          ) AS take) AS c
    ON CONFLICT (update_id) DO NOTHING
    RETURNING {_COLUMNS}"""


@dataclass(frozen=True, slots=True)
class InboxItem:
    """A claimed update: its raw JSON and how many times it has been claimed."""

    update_id: int
    payload: dict[str, Any]
    chat_id: int | None
    attempts: int


class PgInbox:
    """The ``inbox_updates`` queue; each method is one statement."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("storing an incoming update")
    async def add(self, update_id: int, payload: dict[str, Any], *, chat_id: int | None) -> bool:
        """Store a new update; False when it was already stored (a redelivery)."""
        status = await self._pool.execute(
            """INSERT INTO inbox_updates (update_id, payload, chat_id) VALUES ($1, $2, $3)
               ON CONFLICT (update_id) DO NOTHING""",
            update_id,
            payload,
            chat_id,
        )
        return status == "INSERT 0 1"

    @translated("storing an incoming update")
    async def add_claimed(
        self,
        update_id: int,
        payload: dict[str, Any],
        *,
        chat_id: int | None,
        owner: str,
        lease_sec: float,
    ) -> tuple[bool, InboxItem | None]:
        """Store a new update and claim it for `owner` when no older one waits: (new, the
        claimed update or None). A redelivery is (False, None)."""
        row = await self._pool.fetchrow(
            _ADD_CLAIMED, update_id, payload, chat_id, owner, float(lease_sec)
        )
        if row is None:
            return False, None
        if row["status"] != "processing":
            return True, None
        return True, _item(row)

    @translated("storing a rejected update")
    async def reject(self, update_id: int, payload: dict[str, Any], reason: str) -> None:
        """Store an update that will never be processed (malformed, too large), with why."""
        await self._pool.execute(
            """INSERT INTO inbox_updates (update_id, payload, status, error, finished_at)
               VALUES ($1, $2, 'rejected', $3, now()) ON CONFLICT (update_id) DO NOTHING""",
            update_id,
            payload,
            reason[:1000],
        )

    @translated("claiming an incoming update")
    async def claim(self, owner: str, *, lease_sec: float) -> InboxItem | None:
        """The oldest update nobody holds, now held by `owner` for `lease_sec`; or None."""
        row = await self._pool.fetchrow(_CLAIM, owner, float(lease_sec))
        return None if row is None else _item(row)

    @translated("renewing an update's lease")
    async def renew(self, update_id: int, owner: str, *, lease_sec: float) -> bool:
        """Extend the lease; False when this owner no longer holds the update."""
        status = await self._pool.execute(
            """UPDATE inbox_updates SET lease_until = now() + make_interval(secs => $3)
               WHERE update_id = $1 AND owner = $2 AND status = 'processing'""",
            update_id,
            owner,
            float(lease_sec),
        )
        return status != "UPDATE 0"

    @translated("recording an update's outcome")
    async def finish(
        self,
        update_id: int,
        owner: str,
        *,
        status: str = "done",
        error: str | None = None,
        release_chat: str | None = None,
    ) -> None:
        """Done (or failed, with why): never claimed again. `release_chat`: the holder
        whose chat lock goes in the same statement (the update's own lock)."""
        await self._pool.execute(
            """WITH released AS (
                   DELETE FROM leases WHERE scope = 'chat' AND holder = $5)
               UPDATE inbox_updates SET status = $3, error = $4, finished_at = now(),
                                        lease_until = NULL
               WHERE update_id = $1 AND owner = $2""",
            update_id,
            owner,
            status,
            None if error is None else error[:1000],
            release_chat,
        )

    @translated("postponing an update")
    async def retry_later(
        self, update_id: int, owner: str, *, after_sec: float, release_chat: str | None = None
    ) -> None:
        """Back to pending, claimable again after `after_sec` (e.g. the database blinked);
        `release_chat` as in `finish`."""
        await self._pool.execute(
            """WITH released AS (
                   DELETE FROM leases WHERE scope = 'chat' AND holder = $4)
               UPDATE inbox_updates SET status = 'pending',
                                        lease_until = now() + make_interval(secs => $3)
               WHERE update_id = $1 AND owner = $2 AND status = 'processing'""",
            update_id,
            owner,
            float(after_sec),
            release_chat,
        )

    @translated("counting incoming updates")
    async def counts(self) -> dict[str, int]:
        """Updates per status."""
        rows = await self._pool.fetch(
            "SELECT status, count(*) AS n FROM inbox_updates GROUP BY status"
        )
        return {r["status"]: r["n"] for r in rows}


def _item(row: asyncpg.Record) -> InboxItem:
    return InboxItem(
        update_id=row["update_id"],
        payload=row["payload"],
        chat_id=row["chat_id"],
        attempts=row["attempts"],
    )
