"""Token usage per user and UTC day: the ``usage_days`` table, added to on every LLM call."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import asyncpg

from reasoning_core import Usage, UsageDay
from storage.errors import translated


def utc_today() -> date:
    return datetime.now(UTC).date()


class PgUsageStore:
    """`UsageStore` on PostgreSQL. Adding is one upsert, safe under concurrency."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("recording token usage")
    async def add(self, user_id: int, usage: Usage, *, day: date | None = None) -> None:
        """Add `usage` to the user's total for `day` (default: today, UTC).

        An unknown user is a `NotFoundError` (usage belongs to a user the bot has seen).
        """
        await self._pool.execute(
            """INSERT INTO usage_days (user_id, day, prompt_tokens, completion_tokens, llm_calls)
               VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (user_id, day) DO UPDATE SET
                   prompt_tokens = usage_days.prompt_tokens + EXCLUDED.prompt_tokens,
                   completion_tokens = usage_days.completion_tokens + EXCLUDED.completion_tokens,
                   llm_calls = usage_days.llm_calls + EXCLUDED.llm_calls""",
            user_id,
            day or utc_today(),
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.llm_calls,
        )

    @translated("reading token usage")
    async def on(self, user_id: int, day: date) -> Usage:
        """The user's usage on `day`; zero when there was none."""
        row = await self._pool.fetchrow(
            """SELECT prompt_tokens, completion_tokens, llm_calls FROM usage_days
               WHERE user_id = $1 AND day = $2""",
            user_id,
            day,
        )
        return Usage() if row is None else Usage(**dict(row))

    @translated("reading token usage")
    async def recent(self, user_id: int, *, days: int) -> list[UsageDay]:
        """Days with usage among the last `days` days (today included), newest first."""
        rows = await self._pool.fetch(
            """SELECT day, prompt_tokens, completion_tokens, llm_calls FROM usage_days
               WHERE user_id = $1 AND day > $2::date - $3::integer ORDER BY day DESC""",
            user_id,
            utc_today(),
            max(days, 0),
        )
        return [
            UsageDay(
                day=r["day"],
                usage=Usage(
                    prompt_tokens=r["prompt_tokens"],
                    completion_tokens=r["completion_tokens"],
                    llm_calls=r["llm_calls"],
                ),
            )
            for r in rows
        ]
