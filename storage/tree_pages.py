"""What the analysis page reads besides the tree: the journal and the capability links.

``tree_events`` (`TreeJournal`): reflection events of an analysis, in order.
``tree_links`` (`TreeLinkStore`): SHA-256 hashes of link tokens, with expiry and
revocation; a lookup matches only a live link.
"""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any

import asyncpg

from reasoning_core import TreeEvent
from storage.errors import translated


class PgTreeJournal:
    """`TreeJournal` on PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("recording a tree event")
    async def record(self, tree_id: str, event: TreeEvent) -> None:
        """Append the event; NotFoundError if the tree does not exist."""
        await self._pool.execute(
            """INSERT INTO tree_events (tree_id, kind, message, data, created_at)
               VALUES ($1, $2, $3, $4, COALESCE($5, now()))""",
            tree_id,
            event.kind,
            event.message,
            event.data,
            event.created_at,
        )

    @translated("loading tree events")
    async def events(self, tree_id: str) -> builtins.list[TreeEvent]:
        rows = await self._pool.fetch(
            """SELECT kind, message, data, created_at FROM tree_events
               WHERE tree_id = $1 ORDER BY seq""",
            tree_id,
        )
        return [TreeEvent.model_validate(dict(r)) for r in rows]


class PgTreeLinkStore:
    """`TreeLinkStore` on PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("creating a tree link")
    async def add(self, *, tree_id: str, token_hash: bytes, expires_at: datetime) -> None:
        """Store the link; NotFoundError if the tree does not exist."""
        await self._pool.execute(
            "INSERT INTO tree_links (token_hash, tree_id, expires_at) VALUES ($1, $2, $3)",
            token_hash,
            tree_id,
            expires_at,
        )

    @translated("opening a tree link")
    async def tree_of(self, token_hash: bytes, *, now: datetime) -> str | None:
        value = await self._pool.fetchval(
            """SELECT tree_id FROM tree_links
               WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > $2""",
            token_hash,
            now,
        )
        return None if value is None else str(value)

    @translated("revoking tree links")
    async def revoke(self, tree_id: str, *, now: datetime) -> int:
        status = await self._pool.execute(
            """UPDATE tree_links SET revoked_at = $2
               WHERE tree_id = $1 AND revoked_at IS NULL AND expires_at > $2""",
            tree_id,
            now,
        )
        return int(status.split()[-1])
