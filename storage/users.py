"""Users in PostgreSQL: created on first sight, touched on every message."""

from __future__ import annotations

from typing import Any

import asyncpg

from reasoning_core import StoreError, User
from storage.errors import translated

_COLUMNS = "id, username, full_name, role, status, created_at, last_seen_at"


class PgUserStore:
    """`UserStore` on the ``users`` table (role and status are read here, set by admins)."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("saving a user")
    async def touch(
        self, user_id: int, *, username: str | None = None, full_name: str | None = None
    ) -> User:
        """Create the user on first sight; otherwise move last_seen_at and refresh names.

        A name passed as None means "not known now" and keeps the stored one, so a
        caller that knows only the id (the terminal user) does not erase names.
        """
        row = await self._pool.fetchrow(
            f"""INSERT INTO users (id, username, full_name) VALUES ($1, $2, $3)
                ON CONFLICT (id) DO UPDATE SET
                    username = COALESCE(EXCLUDED.username, users.username),
                    full_name = COALESCE(EXCLUDED.full_name, users.full_name),
                    last_seen_at = now()
                RETURNING {_COLUMNS}""",
            user_id,
            username,
            full_name,
        )
        if row is None:  # INSERT ... ON CONFLICT DO UPDATE ... RETURNING always returns a row
            raise StoreError(f"saving user {user_id} returned nothing")
        return User(**dict(row))

    @translated("reading a user")
    async def get(self, user_id: int) -> User | None:
        """The stored user, or None if this id was never seen."""
        row = await self._pool.fetchrow(f"SELECT {_COLUMNS} FROM users WHERE id = $1", user_id)
        return None if row is None else User(**dict(row))
