"""What a killed `whytree run` held, and whether its successors took it over by the lease.

Right after a kill -9, the updates the dead process was answering are still `processing`
under its name in ``inbox_updates``, with the lease it last renewed (`held`). The
mechanism under test: once that lease has run out, another process claims the update
(attempts + 1, its own name) and finishes it. `taken_over` checks that on the rows, by the
database's clock only (no wall-clock bound: a busy machine is slower, not wrong).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg


@dataclass(frozen=True, slots=True)
class Held:
    """An update a process was answering when it was killed."""

    id: int
    chat_id: int | None
    owner: str
    attempts: int
    lease_until: datetime


@asynccontextmanager
async def connected(dsn: str) -> AsyncIterator[asyncpg.Connection[Any]]:
    """One connection to look at the inbox with, closed at the end."""
    conn = await asyncpg.connect(dsn)
    try:
        yield conn
    finally:
        await conn.close()


async def held(conn: asyncpg.Connection[Any], owner: str) -> list[Held]:
    """The updates `owner` held (status `processing`) as the database has them now."""
    rows = await conn.fetch(
        """SELECT id, chat_id, owner, attempts, lease_until FROM inbox_updates
           WHERE status = 'processing' AND owner = $1 ORDER BY id""",
        owner,
    )
    return [Held(**dict(r)) for r in rows]


async def holding(conn: asyncpg.Connection[Any], owner: str) -> bool:
    """Whether `owner` holds an update right now."""
    found = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM inbox_updates WHERE status = 'processing' AND owner = $1)",
        owner,
    )
    return bool(found)


#: Updates not yet answered and deep analyses not yet ended: what can still send something.
OPEN_WORK = """
    SELECT (SELECT count(*) FROM inbox_updates WHERE status IN ('pending', 'processing'))
         + (SELECT count(*) FROM deep_jobs WHERE status IN ('queued', 'running'))"""


async def finished(conn: asyncpg.Connection[Any]) -> bool:
    """Whether every update has its outcome and no deep analysis waits or runs: nothing
    can send anything any more (a late duplicate included)."""
    open_ = await conn.fetchval(OPEN_WORK)
    return bool(open_ == 0)


async def until_finished(conn: asyncpg.Connection[Any], *, limit: float = 120.0) -> bool:
    """Poll `finished` every 0.1 s, `limit` seconds at most; whether it came to be."""
    for _ in range(int(limit * 10)):
        if await finished(conn):
            return True
        await asyncio.sleep(0.1)
    return False


async def taken_over(conn: asyncpg.Connection[Any], updates: list[Held]) -> list[Held]:
    """Those of `updates` that another process claimed again and finished (`done`) after
    the dead holder's lease ran out."""
    if not updates:
        return []
    rows = await conn.fetch(
        "SELECT id, status, owner, attempts, finished_at FROM inbox_updates WHERE id = ANY($1)",
        [u.id for u in updates],
    )
    now = {r["id"]: r for r in rows}
    out = []
    for u in updates:
        row = now.get(u.id)
        if (
            row is not None
            and row["status"] == "done"
            and row["owner"] != u.owner
            and row["attempts"] > u.attempts
            and row["finished_at"] is not None
            and row["finished_at"] > u.lease_until
        ):
            out.append(u)
    return out
