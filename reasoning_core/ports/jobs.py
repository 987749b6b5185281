"""Deep-analysis jobs: durable, resumable after a crash."""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel

from reasoning_core.models import (
    Answer,
)
from reasoning_core.ports.planning import PlanningContext

# Implemented in storage/jobs.py (PgJobStore); driven by reasoning_core/answers/deep_jobs.py.


JobStatus = Literal["queued", "running", "done", "failed"]


class Job(BaseModel):
    """One deep analysis as a durable job: queued -> running -> done | failed.

    A job left ``running`` with an old heartbeat belongs to a crashed process and
    is resumed from its tree (`tree_id`) by the next start-up.
    """

    id: int
    user_id: int
    chat_id: int
    question: str
    context: PlanningContext
    status: JobStatus = "queued"
    tree_id: str | None = None
    attempts: int = 0
    heartbeat_at: datetime | None = None
    answer: Answer | None = None
    error: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    #: The front end's id of the question that started it (an update): asking again with
    #: the same key continues this job rather than starting another.
    key: str | None = None


class JobStore(Protocol):
    """The ``deep_jobs`` queue. Times are the database's clock; raises `StoreError`."""

    async def enqueue(
        self, ctx: PlanningContext, *, user_id: int, chat_id: int, key: str | None = None
    ) -> Job:
        """Queue a new job for this planning context; with a `key` already used, return
        the job of that key as it stands (any status)."""
        ...

    async def take_over(self, job_id: int) -> Job | None:
        """Mark a queued or running job running here (attempts + 1, heartbeat now), for a
        keyed job whose question this process now answers; None if done or failed."""
        ...

    async def claim(self, job_id: int | None = None) -> Job | None:
        """Take a queued job (that one, or the oldest) and mark it running: attempts + 1,
        heartbeat now. None when there is none or another worker holds it."""
        ...

    async def heartbeat(self, job_id: int) -> None:
        """The job's worker is alive (NotFoundError if the job does not exist)."""
        ...

    async def set_tree(self, job_id: int, tree_id: str) -> None:
        """Record the job's tree as soon as it exists, so a crash can resume it."""
        ...

    async def complete(self, job_id: int, answer: Answer) -> None:
        """Mark the job done with its answer."""
        ...

    async def fail(self, job_id: int, error: str) -> None:
        """Mark the job failed with a short, user-safe reason."""
        ...

    async def stale(self, *, older_than_sec: float, limit: int = 50) -> builtins.list[Job]:
        """Unkeyed jobs whose worker is gone: running with a heartbeat older than
        `older_than_sec`, or still queued after that long; oldest first. (Keyed jobs are
        resumed by asking their question again.)"""
        ...

    async def release(self, job_id: int) -> None:
        """A running job this process stops before it could finish: stale at once, so
        another process resumes it now rather than when its heartbeat grows old."""
        ...

    async def reclaim(self, job_id: int, *, older_than_sec: float) -> Job | None:
        """Atomically take over a stale job (running again, attempts + 1, heartbeat now);
        None when it is no longer stale (another process took it, or it finished)."""
        ...

    async def get(self, job_id: int) -> Job | None:
        """One job by id, or None."""
        ...
