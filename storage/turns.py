"""What one answered question leaves behind, written in one statement: the exchange
(``messages``), the long-term memory entry (``memories``) and, when the caller held
it back, the token usage of the turn's model calls (``usage_days``)."""

from __future__ import annotations

from typing import Any

import asyncpg

from reasoning_core import Exchange, MemoryEntry, Usage
from storage.errors import translated
from storage.usage import utc_today

#: The inserts in one statement (one round trip, one implicit transaction); a NULL
#: user id leaves that insert out.
_WRITE = """
WITH x AS (
    INSERT INTO messages (session_id, user_id, chat_id, question, answer, strategy, confidence,
                          uncertainty_reason, tree_id, error, started_at, finished_at,
                          prompt_tokens, completion_tokens, llm_calls)
    SELECT $1::bigint, $2::bigint, $3::bigint, $4::text, $5::text, $6::text, $7::float8,
           $8::text, $9::text, $10::text, $11::timestamptz, $12::timestamptz,
           $13::int, $14::int, $15::int
    WHERE $2::bigint IS NOT NULL
    RETURNING id
), m AS (
    INSERT INTO memories (user_id, chat_id, project, goal_summary, outcome_summary,
                          strategy, confidence, tree_id, parameters)
    SELECT $16::bigint, $17::bigint, $18::text, $19::text, $20::text, $21::text,
           $22::float8, $23::text, $24::jsonb
    WHERE $16::bigint IS NOT NULL
    RETURNING id
), u AS (
    INSERT INTO usage_days (user_id, day, prompt_tokens, completion_tokens, llm_calls)
    SELECT $25::bigint, $26::date, $27::int, $28::int, $29::int
    WHERE $25::bigint IS NOT NULL
    ON CONFLICT (user_id, day) DO UPDATE SET
        prompt_tokens = usage_days.prompt_tokens + EXCLUDED.prompt_tokens,
        completion_tokens = usage_days.completion_tokens + EXCLUDED.completion_tokens,
        llm_calls = usage_days.llm_calls + EXCLUDED.llm_calls
)
SELECT (SELECT count(*) FROM x) AS exchanges, (SELECT count(*) FROM m) AS memories"""


class PgTurnWriter:
    """`TurnWriter`: the exchange and the memory entry, together or not at all."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("recording the exchange and its memory")
    async def write(
        self,
        exchange: Exchange | None,
        memory: MemoryEntry | None,
        *,
        usage: tuple[int, Usage] | None = None,
    ) -> None:
        """`usage`: (user, tokens) to add to the user's day in the same statement."""
        await self._pool.execute(
            _WRITE, *_exchange_args(exchange), *_memory_args(memory), *_usage_args(usage)
        )


def _exchange_args(e: Exchange | None) -> list[Any]:
    if e is None:
        return [None] * 15
    return [
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
    ]


def _memory_args(m: MemoryEntry | None) -> list[Any]:
    if m is None:
        return [None] * 9
    return [
        m.user_id,
        m.chat_id,
        m.project,
        m.goal_summary,
        m.outcome_summary,
        m.strategy,
        m.confidence,
        m.tree_id,
        m.parameters,
    ]


def _usage_args(usage: tuple[int, Usage] | None) -> list[Any]:
    if usage is None:
        return [None] * 5
    user_id, u = usage
    return [user_id, utc_today(), u.prompt_tokens, u.completion_tokens, u.llm_calls]
