"""Exchanges (a question and its answer) in the ``messages`` table.

duration_ms is a generated column (finished_at - started_at); token usage is
spread over prompt_tokens / completion_tokens / llm_calls.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import asyncpg

from reasoning_core import DEFAULT_PROJECT, Exchange, MemoryEntry, TurnContext, Usage
from storage.clarifications import COLUMNS as CLARIFICATION_COLUMNS
from storage.clarifications import pending_clarification
from storage.errors import translated
from storage.memory import DEFAULT_SEARCH_WINDOW, memory_entry, search_sql

_COLUMNS = """session_id, user_id, chat_id, question, answer, strategy, confidence,
              uncertainty_reason, tree_id, error, started_at, finished_at,
              prompt_tokens, completion_tokens, llm_calls"""


def _exchange(row: asyncpg.Record | dict[str, Any]) -> Exchange:
    data = dict(row)
    usage = Usage(
        prompt_tokens=data.pop("prompt_tokens"),
        completion_tokens=data.pop("completion_tokens"),
        llm_calls=data.pop("llm_calls"),
    )
    return Exchange(**data, usage=usage)


#: The turn's memory search ($5 the query, NULL: none; $6 how many; $7 the window).
_MEMORIES = search_sql(
    user="$1",
    chat="$2",
    project=f"coalesce((SELECT project FROM p), '{DEFAULT_PROJECT}')",
    query="$5::text",
    top_k="$6",
    window="$7",
)

#: Project, open session (opened when there is none), its last exchanges, the open
#: clarification and the memory entries best matching the question, in one statement:
#: one row per exchange, or one row of NULL exchange columns without any.
_TURN = f"""
WITH p AS (SELECT project FROM user_projects WHERE user_id = $1 AND chat_id = $2),
     open AS (SELECT id FROM sessions WHERE user_id = $1 AND chat_id = $2 AND ended_at IS NULL),
     made AS (INSERT INTO sessions (user_id, chat_id)
              SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM open)
              ON CONFLICT (user_id, chat_id) WHERE ended_at IS NULL DO NOTHING
              RETURNING id),
     s AS (SELECT id FROM open UNION ALL SELECT id FROM made LIMIT 1)
SELECT (SELECT project FROM p) AS turn_project, (SELECT id FROM s) AS turn_session,
       (SELECT to_jsonb(c) FROM (
            SELECT {CLARIFICATION_COLUMNS} FROM clarifications
            WHERE chat_id = $2 AND user_id = $1 AND status = 'active' AND expires_at > $4
        ) AS c) AS turn_pending,
       CASE WHEN $5::text IS NOT NULL THEN (
           SELECT coalesce(jsonb_agg(to_jsonb(r) - 'rank'
                                     ORDER BY r.rank DESC, r.created_at DESC, r.id DESC),
                           '[]'::jsonb)
           FROM ({_MEMORIES}) AS r) END AS turn_memories,
       last.*
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (
    SELECT id, {_COLUMNS} FROM messages
    WHERE session_id = (SELECT id FROM s) ORDER BY id DESC LIMIT $3
) AS last ON true
ORDER BY last.id"""


class PgTurnContextStore:
    """`TurnContextStore`: the reads a question starts with, in one round trip."""

    def __init__(
        self, pool: asyncpg.Pool[Any], *, search_window: int = DEFAULT_SEARCH_WINDOW
    ) -> None:
        self._pool = pool
        self._window = search_window

    @translated("reading the turn context")
    async def load(
        self,
        *,
        user_id: int,
        chat_id: int,
        history_limit: int,
        now: datetime,
        memory_query: str | None = None,
        memory_top_k: int = 0,
    ) -> TurnContext | None:
        """None when a concurrent request opened the session first (read it separately)."""
        rows = await self._pool.fetch(
            _TURN,
            user_id,
            chat_id,
            max(history_limit, 0),
            now,
            memory_query,
            max(memory_top_k, 0),
            self._window,
        )
        if not rows or rows[0]["turn_session"] is None:
            return None
        history = [_exchange(_without(r, *_TURN_FIELDS)) for r in rows if r["id"] is not None]
        first = rows[0]
        pending = first["turn_pending"]
        return TurnContext(
            project=first["turn_project"] or DEFAULT_PROJECT,
            session_id=first["turn_session"],
            history=history,
            pending=None if pending is None else pending_clarification(_loaded(pending)),
            memories=_memories(first["turn_memories"]),
        )


_TURN_FIELDS = ("turn_project", "turn_session", "turn_pending", "turn_memories", "id")


def _memories(value: Any) -> list[MemoryEntry] | None:
    if value is None:
        return None
    rows: list[dict[str, Any]] = json.loads(value) if isinstance(value, str) else value
    return [memory_entry(row) for row in rows]


def _loaded(value: Any) -> dict[str, Any]:
    """A jsonb value, decoded whether or not the pool has a jsonb codec."""
    data: dict[str, Any] = json.loads(value) if isinstance(value, str) else value
    return data


def _without(row: asyncpg.Record, *names: str) -> dict[str, Any]:
    return {k: v for k, v in dict(row).items() if k not in names}


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
