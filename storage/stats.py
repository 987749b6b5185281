"""Statistics for /stats and /health, read from the tables other features write.

Deep-analysis jobs are counted from ``deep_jobs`` (migrations/004_jobs.sql).
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import asyncpg

from reasoning_core import UNCERTAINTY_THRESHOLD, Stats, StrategyStats
from storage.errors import translated

_PER_STRATEGY = """
    SELECT strategy, count(*) AS questions, avg(confidence) AS mean_confidence,
           count(*) FILTER (WHERE confidence < $2) AS below_threshold,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) / 1000.0 AS median_seconds,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) / 1000.0 AS p95_seconds
    FROM messages WHERE finished_at >= $1 GROUP BY strategy ORDER BY count(*) DESC, strategy"""

_TOTALS = """
    SELECT count(*) AS questions,
           count(*) FILTER (WHERE confidence < $2) AS below_threshold,
           count(*) FILTER (WHERE strategy = 'decline') AS declines,
           COALESCE(sum(llm_calls), 0) AS llm_calls,
           COALESCE(sum(prompt_tokens), 0) AS prompt_tokens,
           COALESCE(sum(completion_tokens), 0) AS completion_tokens,
           count(DISTINCT user_id) AS active_users
    FROM messages WHERE finished_at >= $1"""

_CLARIFICATIONS = """
    SELECT count(*) FILTER (WHERE created_at >= $1) AS clarifications_asked,
           count(*) FILTER (WHERE status = 'answered' AND closed_at >= $1)
               AS clarifications_resumed
    FROM clarifications"""

_TREES = """
    SELECT count(*) AS trees, COALESCE(sum(revision), 0) AS revisions
    FROM trees WHERE created_at >= $1"""

_JOBS = """
    SELECT status, count(*) AS n FROM deep_jobs
    WHERE $1::timestamptz IS NULL OR created_at >= $1 GROUP BY status"""

_PING_TIMEOUT = 3.0


class PgStatsStore:
    """`StatsStore` on PostgreSQL: read-only queries, one connection per call."""

    def __init__(self, pool: asyncpg.Pool[Any], *, ping_timeout: float = _PING_TIMEOUT) -> None:
        self._pool = pool
        self._ping_timeout = ping_timeout

    @translated("checking the database")
    async def ping(self) -> float:
        """Seconds one `SELECT 1` takes; StoreError when unreachable or slower than the limit."""
        started = time.perf_counter()
        async with asyncio.timeout(self._ping_timeout):
            await self._pool.fetchval("SELECT 1")
        return time.perf_counter() - started

    @translated("computing statistics")
    async def stats(self, since: datetime) -> Stats:
        """Answers, clarifications, trees, jobs and tokens since `since`."""
        async with self._pool.acquire() as conn, conn.transaction(readonly=True):
            strategies = await conn.fetch(_PER_STRATEGY, since, UNCERTAINTY_THRESHOLD)
            totals = await conn.fetchrow(_TOTALS, since, UNCERTAINTY_THRESHOLD)
            clarifications = await conn.fetchrow(_CLARIFICATIONS, since)
            trees = await conn.fetchrow(_TREES, since)
            jobs = await conn.fetch(_JOBS, since)
        return Stats(
            since=since,
            strategies=[StrategyStats(**dict(r)) for r in strategies],
            deep_jobs={r["status"]: r["n"] for r in jobs},
            **dict(totals or {}),
            **dict(clarifications or {}),
            **dict(trees or {}),
        )

    @translated("counting deep-analysis jobs")
    async def deep_job_counts(self) -> dict[str, int]:
        """Jobs per status (queued, running, done, failed), all time."""
        rows = await self._pool.fetch(_JOBS, None)
        return {r["status"]: r["n"] for r in rows}
