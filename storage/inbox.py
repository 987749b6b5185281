"""The inbox of Telegram updates in PostgreSQL (``inbox_updates``, migrations 009, 014).

An update is stored before it is acknowledged, keyed by its bot, its update_id and a hash
of its body (migration 014): the same update delivered again is a no-op; another bot's
update with the same id, or a new update whose id meets an old one (Telegram picks a
random id after a week of silence), is a new update. A `PgInbox` is one bot's inbox: it
stores and claims that bot's updates only. Each stored update has a row id (`InboxItem.id`)
that names what answering it leaves behind (replies, leases, a deep job).

Processes claim updates with ``FOR UPDATE SKIP LOCKED`` under a lease of a few seconds
they keep renewing; an update whose lease ran out (its process died) is claimed again by
any process. An update claimed more than `max_attempts` times is a poison update: it
comes back once more, flagged, so its processor can tell the user, and is then failed.
Times are the database's clock, never the workers'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import asyncpg

from storage.errors import translated

#: What storing an update found: a new update, a new one whose id this bot used before
#: for another body, or the same update again (nothing stored).
Arrival = Literal["new", "reused", "redelivery"]

_COLUMNS = "id, bot_id, update_id, payload, chat_id, status, attempts, error"

_CLAIM = f"""
    UPDATE inbox_updates SET status = 'processing', attempts = attempts + 1, owner = $2,
                             lease_until = now() + make_interval(secs => $3)
    WHERE id = (
        SELECT id FROM inbox_updates
        WHERE bot_id = $1
          AND ((status = 'pending' AND (lease_until IS NULL OR lease_until < now()))
               OR (status = 'processing' AND lease_until < now()))
        ORDER BY received_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
    )
    RETURNING {_COLUMNS}"""

#: Whether this bot stored the update id before (with another body: a redelivery of
#: the same body never gets past ON CONFLICT). A subquery of RETURNING sees the table
#: as it was before the statement.
_REUSED = "EXISTS (SELECT 1 FROM inbox_updates o WHERE o.bot_id = $1 AND o.update_id = $2)"

#: Store an update and, unless older updates of the bot wait, claim it for $5 in the
#: same statement (the process that received it answers it at once: no claim round
#: trip). A redelivery returns nothing.
_ADD_CLAIMED = f"""
    INSERT INTO inbox_updates (bot_id, update_id, payload, chat_id, status, attempts, owner,
                               lease_until)
    SELECT $1, $2, $3, $4,
           CASE WHEN c.take THEN 'processing' ELSE 'pending' END,
           CASE WHEN c.take THEN 1 ELSE 0 END,
           CASE WHEN c.take THEN $5 END,
           CASE WHEN c.take THEN now() + make_interval(secs => $6) END
    FROM (SELECT NOT EXISTS (
              SELECT 1 FROM inbox_updates
              WHERE bot_id = $1 AND status = 'pending'
                AND (lease_until IS NULL OR lease_until < now())
          ) AS take) AS c
    ON CONFLICT (bot_id, update_id, payload_hash) DO NOTHING
    RETURNING {_COLUMNS}, {_REUSED} AS reused"""


@dataclass(frozen=True, slots=True)
class InboxItem:
    """A claimed update: its row, its raw JSON and how many times it has been claimed."""

    id: int
    bot_id: int
    update_id: int
    payload: dict[str, Any]
    chat_id: int | None
    attempts: int


class PgInbox:
    """One bot's part of the ``inbox_updates`` queue; each method is one statement."""

    def __init__(self, pool: asyncpg.Pool[Any], *, bot_id: int) -> None:
        self._pool = pool
        self.bot_id = bot_id

    @translated("adopting updates stored before updates were kept per bot")
    async def adopt_legacy(self) -> int:
        """Rows stored before migration 014 (bot 0) become this bot's; how many did.
        Idempotent: the first bot process to start after the migration adopts them."""
        status = await self._pool.execute(
            """UPDATE inbox_updates i SET bot_id = $1
               WHERE bot_id = 0 AND NOT EXISTS (
                   SELECT 1 FROM inbox_updates o WHERE o.bot_id = $1
                   AND o.update_id = i.update_id AND o.payload_hash = i.payload_hash)""",
            self.bot_id,
        )
        return int(status.split()[-1])

    @translated("storing an incoming update")
    async def add(
        self, update_id: int, payload: dict[str, Any], *, chat_id: int | None
    ) -> Arrival:
        """Store an update; "redelivery" when this very update was stored already."""
        reused: bool | None = await self._pool.fetchval(
            f"""INSERT INTO inbox_updates (bot_id, update_id, payload, chat_id)
                VALUES ($1, $2, $3, $4)
                ON CONFLICT (bot_id, update_id, payload_hash) DO NOTHING
                RETURNING {_REUSED}""",
            self.bot_id,
            update_id,
            payload,
            chat_id,
        )
        return _arrival(reused)

    @translated("storing an incoming update")
    async def add_claimed(
        self,
        update_id: int,
        payload: dict[str, Any],
        *,
        chat_id: int | None,
        owner: str,
        lease_sec: float,
    ) -> tuple[Arrival, InboxItem | None]:
        """Store a new update and claim it for `owner` when no older one waits: (what it
        is, the claimed update or None). A redelivery is ("redelivery", None)."""
        row = await self._pool.fetchrow(
            _ADD_CLAIMED, self.bot_id, update_id, payload, chat_id, owner, float(lease_sec)
        )
        if row is None:
            return "redelivery", None
        arrival = _arrival(row["reused"])
        if row["status"] != "processing":
            return arrival, None
        return arrival, _item(row)

    @translated("storing a rejected update")
    async def reject(self, update_id: int, payload: dict[str, Any], reason: str) -> None:
        """Store an update that will never be processed (malformed, too large), with why."""
        await self._pool.execute(
            """INSERT INTO inbox_updates (bot_id, update_id, payload, status, error, finished_at)
               VALUES ($1, $2, $3, 'rejected', $4, now())
               ON CONFLICT (bot_id, update_id, payload_hash) DO NOTHING""",
            self.bot_id,
            update_id,
            payload,
            reason[:1000],
        )

    @translated("claiming an incoming update")
    async def claim(self, owner: str, *, lease_sec: float) -> InboxItem | None:
        """This bot's oldest update nobody holds, now held by `owner` for `lease_sec`."""
        row = await self._pool.fetchrow(_CLAIM, self.bot_id, owner, float(lease_sec))
        return None if row is None else _item(row)

    @translated("renewing an update's lease")
    async def renew(self, item_id: int, owner: str, *, lease_sec: float) -> bool:
        """Extend the lease; False when this owner no longer holds the update."""
        status = await self._pool.execute(
            """UPDATE inbox_updates SET lease_until = now() + make_interval(secs => $3)
               WHERE id = $1 AND owner = $2 AND status = 'processing'""",
            item_id,
            owner,
            float(lease_sec),
        )
        return status != "UPDATE 0"

    @translated("recording an update's outcome")
    async def finish(
        self,
        item_id: int,
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
               WHERE id = $1 AND owner = $2""",
            item_id,
            owner,
            status,
            None if error is None else error[:1000],
            release_chat,
        )

    @translated("postponing an update")
    async def retry_later(
        self, item_id: int, owner: str, *, after_sec: float, release_chat: str | None = None
    ) -> None:
        """Back to pending, claimable again after `after_sec` (e.g. the database blinked);
        `release_chat` as in `finish`."""
        await self._pool.execute(
            """WITH released AS (
                   DELETE FROM leases WHERE scope = 'chat' AND holder = $4)
               UPDATE inbox_updates SET status = 'pending',
                                        lease_until = now() + make_interval(secs => $3)
               WHERE id = $1 AND owner = $2 AND status = 'processing'""",
            item_id,
            owner,
            float(after_sec),
            release_chat,
        )

    @translated("handing an update back")
    async def hand_back(
        self, item_id: int, owner: str, *, release_chat: str | None = None
    ) -> None:
        """Pending again, claimable by any process at once: this one stops before it could
        finish. The claim is not counted (the update did not kill its processor).
        `release_chat` as in `finish`."""
        await self._pool.execute(
            """WITH released AS (
                   DELETE FROM leases WHERE scope = 'chat' AND holder = $3)
               UPDATE inbox_updates SET status = 'pending', lease_until = NULL,
                                        attempts = greatest(attempts - 1, 0)
               WHERE id = $1 AND owner = $2 AND status = 'processing'""",
            item_id,
            owner,
            release_chat,
        )

    @translated("counting incoming updates")
    async def counts(self) -> dict[str, int]:
        """This bot's updates per status."""
        rows = await self._pool.fetch(
            "SELECT status, count(*) AS n FROM inbox_updates WHERE bot_id = $1 GROUP BY status",
            self.bot_id,
        )
        return {r["status"]: r["n"] for r in rows}


def _arrival(reused: bool | None) -> Arrival:
    if reused is None:
        return "redelivery"
    return "reused" if reused else "new"


def _item(row: asyncpg.Record) -> InboxItem:
    return InboxItem(
        id=row["id"],
        bot_id=row["bot_id"],
        update_id=row["update_id"],
        payload=row["payload"],
        chat_id=row["chat_id"],
        attempts=row["attempts"],
    )
