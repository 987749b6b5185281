"""Deep-analysis jobs in PostgreSQL: the ``deep_jobs`` table (`JobStore`).

Claiming uses ``FOR UPDATE SKIP LOCKED``, so several processes may take jobs
from the same queue without waiting for each other or taking one twice;
taking over a stale job is one conditional UPDATE, so only one process wins.
Heartbeats and staleness use the database's clock, never the workers'.
"""

from __future__ import annotations

import builtins
from typing import Any

import asyncpg

from reasoning_core import Answer, Job, NotFoundError, PlanningContext
from storage.errors import translated

_COLUMNS = (
    "id, user_id, chat_id, question, context, status, tree_id, attempts, heartbeat_at,"
    " answer, error, created_at, updated_at, key"
)

_CLAIM = f"""
    UPDATE deep_jobs SET status = 'running', attempts = attempts + 1,
                         heartbeat_at = now(), updated_at = now()
    WHERE id = (
        SELECT id FROM deep_jobs
        WHERE status = 'queued' AND ($1::bigint IS NULL OR id = $1)
        ORDER BY created_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
    )
    RETURNING {_COLUMNS}"""

# Keyed jobs belong to an update in the inbox: processing it again resumes them.
_STALE_CONDITION = """
    key IS NULL AND ((status = 'running' AND heartbeat_at < now() - make_interval(secs => $1))
     OR (status = 'queued' AND created_at < now() - make_interval(secs => $1)))"""

_RECLAIM = f"""
    UPDATE deep_jobs SET status = 'running', attempts = attempts + 1,
                         heartbeat_at = now(), updated_at = now()
    WHERE id = (
        SELECT id FROM deep_jobs WHERE id = $2 AND {_STALE_CONDITION}
        FOR UPDATE SKIP LOCKED
    )
    RETURNING {_COLUMNS}"""


def _job(row: asyncpg.Record) -> Job:
    # The pool's codec has decoded the JSONB columns; pydantic validates them.
    return Job.model_validate(dict(row))


class PgJobStore:
    """`JobStore` on PostgreSQL; each method is one statement (one transaction)."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("queueing a deep analysis")
    async def enqueue(
        self, ctx: PlanningContext, *, user_id: int, chat_id: int, key: str | None = None
    ) -> Job:
        """Insert a queued job; with a `key` already used, the job of that key as it is."""
        row = await self._pool.fetchrow(
            f"""WITH added AS (
                    INSERT INTO deep_jobs (user_id, chat_id, question, context, key)
                    VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING
                    RETURNING {_COLUMNS})
                SELECT {_COLUMNS} FROM added
                UNION ALL SELECT {_COLUMNS} FROM deep_jobs WHERE key = $5
                LIMIT 1""",
            user_id,
            chat_id,
            ctx.question,
            ctx.model_dump(mode="json"),
            key,
        )
        assert row is not None
        return _job(row)

    @translated("taking over a deep analysis")
    async def take_over(self, job_id: int) -> Job | None:
        """Running again under this process (attempts + 1), whatever its heartbeat: for a
        keyed job whose update this process now holds. None if it is done or failed."""
        row = await self._pool.fetchrow(
            f"""UPDATE deep_jobs SET status = 'running', attempts = attempts + 1,
                                     heartbeat_at = now(), updated_at = now()
                WHERE id = $1 AND status IN ('queued', 'running') RETURNING {_COLUMNS}""",
            job_id,
        )
        return None if row is None else _job(row)

    @translated("claiming a deep analysis")
    async def claim(self, job_id: int | None = None) -> Job | None:
        """Mark a queued job running (that one, or the oldest); None if none is free."""
        row = await self._pool.fetchrow(_CLAIM, job_id)
        return None if row is None else _job(row)

    @translated("recording a job heartbeat")
    async def heartbeat(self, job_id: int) -> None:
        """Refresh heartbeat_at; NotFoundError if there is no such job."""
        await self._update(job_id, "heartbeat_at = now()")

    @translated("recording a job's tree")
    async def set_tree(self, job_id: int, tree_id: str) -> None:
        """Link the job to its tree (NotFoundError if either does not exist)."""
        await self._update(job_id, "tree_id = $2", tree_id)

    @translated("completing a deep analysis")
    async def complete(self, job_id: int, answer: Answer) -> None:
        """Done, with the answer (and the tree id it names)."""
        await self._update(
            job_id,
            "status = 'done', answer = $2, tree_id = COALESCE($3, tree_id), error = NULL",
            answer.model_dump(mode="json"),
            answer.tree_id,
        )

    @translated("failing a deep analysis")
    async def fail(self, job_id: int, error: str) -> None:
        """Failed, with a short reason."""
        await self._update(job_id, "status = 'failed', error = $2", error[:1000])

    @translated("finding stale deep analyses")
    async def stale(self, *, older_than_sec: float, limit: int = 50) -> builtins.list[Job]:
        """Running jobs without a recent heartbeat and long-queued jobs, oldest first."""
        rows = await self._pool.fetch(
            f"""SELECT {_COLUMNS} FROM deep_jobs WHERE {_STALE_CONDITION}
                ORDER BY created_at, id LIMIT $2""",
            float(older_than_sec),
            limit,
        )
        return [_job(r) for r in rows]

    @translated("releasing a deep analysis")
    async def release(self, job_id: int) -> None:
        """Running with no heartbeat to speak of: stale for every process at once."""
        await self._pool.execute(
            """UPDATE deep_jobs SET heartbeat_at = '-infinity', updated_at = now()
               WHERE id = $1 AND status = 'running'""",
            job_id,
        )

    @translated("taking over a stale deep analysis")
    async def reclaim(self, job_id: int, *, older_than_sec: float) -> Job | None:
        """Running again under this process, if the job is still stale."""
        row = await self._pool.fetchrow(_RECLAIM, float(older_than_sec), job_id)
        return None if row is None else _job(row)

    @translated("loading a deep analysis")
    async def get(self, job_id: int) -> Job | None:
        """One job, or None."""
        row = await self._pool.fetchrow(f"SELECT {_COLUMNS} FROM deep_jobs WHERE id = $1", job_id)
        return None if row is None else _job(row)

    async def _update(self, job_id: int, assignments: str, *args: Any) -> None:
        # `assignments` is one of this module's constants, never user input.
        status = await self._pool.execute(
            f"UPDATE deep_jobs SET {assignments}, updated_at = now() WHERE id = $1",
            job_id,
            *args,
        )
        if status == "UPDATE 0":
            raise NotFoundError(f"no deep-analysis job {job_id}")
