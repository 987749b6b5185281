"""Exchanges (a question and its answer) in the ``messages`` table.

duration_ms is a generated column (finished_at - started_at); token usage is
spread over prompt_tokens / completion_tokens / llm_calls.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from reasoning_core.models import Usage
from reasoning_core.ports import Exchange
from storage.errors import translated

_COLUMNS = """session_id, user_id, chat_id, question, answer, strategy, confidence,
              uncertainty_reason, tree_id, error, started_at, finished_at,
              prompt_tokens, completion_tokens, llm_calls"""


def _exchange(row: asyncpg.Record) -> Exchange:
    data = dict(row)
    usage = Usage(
        prompt_tokens=data.pop("prompt_tokens"),
        completion_tokens=data.pop("completion_tokens"),
        llm_calls=data.pop("llm_calls"),
    )
    return Exchange(**data, usage=usage)


class PgExchangeStore:
    """`ExchangeStore` on the ``messages`` table."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("recording an exchange")
    async def record(self, exchange: Exchange) -> int:
        """Persist one exchange; returns its id. An unknown session or user -> NotFoundError."""
        e = exchange
        exchange_id: int = await self._pool.fetchval(
            f"""INSERT INTO messages ({_COLUMNS})
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
                RETURNING id""",
            e.session_id,
            e.user_id,
            e.chat_id,
            e.question,
            e.answer,
            e.strategy,
            e.confidence,
            e.uncertainty_reason,
            e.tree_id,
            e.error,
            e.started_at,
            e.finished_at,
            e.usage.prompt_tokens,
            e.usage.completion_tokens,
            e.usage.llm_calls,
        )
        return exchange_id

    @translated("reading recent exchanges")
    async def recent(self, *, session_id: int, limit: int = 10) -> list[Exchange]:
        """The last `limit` exchanges of a session, oldest first."""
        rows = await self._pool.fetch(
            f"""SELECT {_COLUMNS} FROM (
                    SELECT id, {_COLUMNS} FROM messages
                    WHERE session_id = $1 ORDER BY id DESC LIMIT $2
                ) AS last ORDER BY id""",
            session_id,
            max(limit, 0),
        )
        return [_exchange(r) for r in rows]

    @translated("counting exchanges")
    async def count_for_user(self, user_id: int) -> int:
        """How many exchanges this user has, across all sessions and chats."""
        count: int = await self._pool.fetchval(
            "SELECT count(*) FROM messages WHERE user_id = $1", user_id
        )
        return count
