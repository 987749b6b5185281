"""Accounts for administration: roles, bans and the allowlist on the ``users`` table.

Admins change a user's status or allowlist entry only for ids the bot has seen
(every message creates its user): an unknown id returns None, so the command can
say so instead of silently creating a row for a typo.
"""

from __future__ import annotations

import builtins
from typing import Any

import asyncpg

from reasoning_core import Account, UserStatus
from storage.errors import translated

_COLUMNS = """u.id, u.username, u.full_name, u.role, u.status, u.created_at, u.last_seen_at,
              u.allowed, u.ban_reason, u.status_changed_at, u.status_changed_by"""

_WITH_QUESTIONS = f"""SELECT {_COLUMNS},
    (SELECT count(*) FROM messages m WHERE m.user_id = u.id) AS questions
    FROM users u"""


def _account(row: asyncpg.Record | None) -> Account | None:
    return None if row is None else Account(**dict(row))


class PgAccountStore:
    """`AccountStore` on PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("reading an account")
    async def get(self, user_id: int) -> Account | None:
        """The account, or None if this id never wrote to the bot."""
        return _account(await self._pool.fetchrow(f"{_WITH_QUESTIONS} WHERE u.id = $1", user_id))

    @translated("listing users")
    async def page(self, *, offset: int, limit: int) -> builtins.list[Account]:
        """Users by last contact, newest first."""
        rows = await self._pool.fetch(
            f"{_WITH_QUESTIONS} ORDER BY u.last_seen_at DESC, u.id OFFSET $1 LIMIT $2",
            max(offset, 0),
            max(limit, 0),
        )
        return [Account(**dict(r)) for r in rows]

    @translated("counting users")
    async def count(self) -> int:
        count: int = await self._pool.fetchval("SELECT count(*) FROM users")
        return count

    @translated("changing a user's status")
    async def set_status(
        self, user_id: int, status: UserStatus, *, by: int, reason: str | None = None
    ) -> Account | None:
        """Ban or unban; the reason is kept only while banned. None if the id is unknown."""
        row = await self._pool.fetchrow(
            """UPDATE users SET status = $2, ban_reason = CASE WHEN $2 = 'banned' THEN $3 END,
                   status_changed_at = now(), status_changed_by = $4
               WHERE id = $1 RETURNING id""",
            user_id,
            status,
            reason,
            by,
        )
        return None if row is None else await self.get(user_id)

    @translated("changing the allowlist")
    async def set_allowed(self, user_id: int, allowed: bool, *, by: int) -> Account | None:
        """Put the user on the allowlist or take them off; None if the id is unknown."""
        row = await self._pool.fetchrow(
            """UPDATE users SET allowed = $2, status_changed_at = now(), status_changed_by = $3
               WHERE id = $1 RETURNING id""",
            user_id,
            allowed,
            by,
        )
        return None if row is None else await self.get(user_id)
