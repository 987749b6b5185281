"""Conversation sessions in PostgreSQL: one open session per user and chat.

The partial unique index ``sessions_one_open`` guarantees "one open"; the code
below only has to cope with losing a race against it, by reading the winner's row.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from reasoning_core import StoreError
from storage.errors import translated

#: Each lost race means another caller just opened or closed the session; a few
#: retries are plenty, more would hide a bug.
_ATTEMPTS = 5

_SELECT_OPEN = """SELECT id FROM sessions
                  WHERE user_id = $1 AND chat_id = $2 AND ended_at IS NULL"""
_INSERT_OPEN = """INSERT INTO sessions (user_id, chat_id) VALUES ($1, $2)
                  ON CONFLICT (user_id, chat_id) WHERE ended_at IS NULL DO NOTHING
                  RETURNING id"""


class PgSessionStore:
    """`SessionStore` on the ``sessions`` table."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("opening a session")
    async def current(self, *, user_id: int, chat_id: int) -> int:
        """The open session of this user in this chat, created if there is none.

        Race-safe: concurrent callers all get the same id. The user must exist
        (`NotFoundError` otherwise).
        """
        for _ in range(_ATTEMPTS):
            session_id: int | None = await self._pool.fetchval(_SELECT_OPEN, user_id, chat_id)
            if session_id is not None:
                return session_id
            # ON CONFLICT waits for a concurrent inserter and then yields to it; the
            # next SELECT (a new statement, a new snapshot) sees the winner's row.
            session_id = await self._pool.fetchval(_INSERT_OPEN, user_id, chat_id)
            if session_id is not None:
                return session_id
        raise StoreError(f"could not open a session for user {user_id} in chat {chat_id}")

    @translated("starting a new session")
    async def start_new(self, *, user_id: int, chat_id: int) -> int:
        """Close the open session (if any) and open a new one, in one transaction."""
        for _ in range(_ATTEMPTS):
            async with self._pool.acquire() as conn, conn.transaction():
                await conn.execute(
                    """UPDATE sessions SET ended_at = now()
                       WHERE user_id = $1 AND chat_id = $2 AND ended_at IS NULL""",
                    user_id,
                    chat_id,
                )
                session_id: int | None = await conn.fetchval(_INSERT_OPEN, user_id, chat_id)
            if session_id is not None:
                return session_id
            # A concurrent caller opened a session after our UPDATE: close that one too.
        raise StoreError(f"could not start a session for user {user_id} in chat {chat_id}")
