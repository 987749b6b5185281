"""Leases in PostgreSQL (``leases``, migration 009): at most N holders of a name.

One question per chat is ``acquire("chat", chat_id, holder, limit=1)``; deep-analysis
slots are ``acquire("deep", user_id, holder, limit=N)``. Acquiring is one call of
``whytree_take_lease`` (migration 011): it serialises on a transaction-level advisory
lock on (scope, name), drops expired leases, and takes a lease only when fewer than
`limit` others are live. The same holder acquiring again
(an update processed again after a crash) renews its own lease. A holder that dies
stops renewing and its leases run out after `ttl_sec`.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from storage.errors import translated


class PgLeases:
    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("taking a lease")
    async def acquire(
        self, scope: str, name: str, holder: str, *, limit: int, ttl_sec: float
    ) -> bool:
        """True with the lease held (or renewed) for `ttl_sec`; False when `limit` others
        hold one."""
        taken: bool = await self._pool.fetchval(
            "SELECT whytree_take_lease($1, $2, $3, $4, $5)",
            scope,
            name,
            holder,
            limit,
            float(ttl_sec),
        )
        return taken

    @translated("releasing a lease")
    async def release(self, scope: str, name: str, holder: str) -> None:
        await self._pool.execute(
            "DELETE FROM leases WHERE scope = $1 AND name = $2 AND holder = $3",
            scope,
            name,
            holder,
        )

    @translated("renewing leases")
    async def renew_all(self, holder: str, *, ttl_sec: float) -> None:
        """Every lease of `holder` runs for `ttl_sec` more (the holder is alive)."""
        await self._pool.execute(
            """UPDATE leases SET lease_until = now() + make_interval(secs => $2)
               WHERE holder = $1""",
            holder,
            float(ttl_sec),
        )

    @translated("counting leases")
    async def held(self, scope: str, name: str | None = None) -> int:
        """Live leases of a scope (and name)."""
        count: int = await self._pool.fetchval(
            """SELECT count(*) FROM leases WHERE scope = $1 AND ($2::text IS NULL OR name = $2)
               AND lease_until >= now()""",
            scope,
            name,
        )
        return count


class PgRateHits:
    """Hits over a sliding window, counted in ``rate_hits`` across replicas (one call of
    ``whytree_rate_hit``, migration 012): a user's questions (scope ``question``) or an
    API key's calls (scope ``api_key``)."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("counting hits for the rate limit")
    async def hit(
        self,
        subject: int,
        key: str,
        *,
        limit: int,
        window_sec: float,
        scope: str = "question",
    ) -> float:
        """Record the hit `key` of `subject` if allowed and return 0; else seconds until one
        is allowed. The same key counts once (an update processed again)."""
        wait: float = await self._pool.fetchval(
            "SELECT whytree_rate_hit($1, $2, $3, $4, $5)",
            scope,
            subject,
            key,
            limit,
            float(window_sec),
        )
        return float(wait)
