"""PgJobStore against real PostgreSQL: the deep_jobs queue, claims, heartbeats, staleness."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from reasoning_core.errors import NotFoundError
from reasoning_core.models import Answer, Node, Tree
from reasoning_core.ports.planning import PlanningContext
from storage.jobs import PgJobStore
from storage.trees import PgTreeStore

CTX = PlanningContext(
    question="Why did traffic drop on cell 12345?", goal="Find the cause",
    parameters={"cell": "12345"}, memory=["last week: an outage"],
)  # fmt: skip


@pytest.fixture
def jobs(pool: asyncpg.Pool[Any]) -> PgJobStore:
    return PgJobStore(pool)


async def make_tree(pool: asyncpg.Pool[Any], tree_id: str) -> None:
    root = Node(id="root", tree_id=tree_id, node_type="root", description="why?")
    await PgTreeStore(pool).create(Tree(id=tree_id, task="why?", user_id=7, nodes={"root": root}))


async def age(pool: asyncpg.Pool[Any], job_id: int, seconds: int) -> None:
    await pool.execute(
        """UPDATE deep_jobs SET heartbeat_at = heartbeat_at - make_interval(secs => $2),
                                created_at = created_at - make_interval(secs => $2)
           WHERE id = $1""",
        job_id,
        float(seconds),
    )


async def test_a_job_goes_from_queued_to_done(jobs: PgJobStore, pool: asyncpg.Pool[Any]) -> None:
    job = await jobs.enqueue(CTX, user_id=7, chat_id=70)
    assert (job.status, job.attempts, job.context) == ("queued", 0, CTX)
    assert job.question == CTX.question and job.created_at is not None
    claimed = await jobs.claim(job.id)
    assert claimed is not None and claimed.status == "running" and claimed.attempts == 1
    assert claimed.heartbeat_at is not None
    assert await jobs.claim(job.id) is None  # not queued any more
    await make_tree(pool, "t1")
    await jobs.set_tree(job.id, "t1")
    await jobs.heartbeat(job.id)
    answer = Answer(strategy="deep", text="report", confidence=0.8, tree_id="t1")
    await jobs.complete(job.id, answer)
    done = await jobs.get(job.id)
    assert done is not None and done.status == "done" and done.answer == answer
    assert done.tree_id == "t1" and done.error is None


async def test_failures_and_unknown_ids(jobs: PgJobStore) -> None:
    job = await jobs.enqueue(CTX, user_id=7, chat_id=70)
    await jobs.fail(job.id, "the planner failed")
    failed = await jobs.get(job.id)
    assert failed is not None and (failed.status, failed.error) == ("failed", "the planner failed")
    with pytest.raises(NotFoundError):
        await jobs.heartbeat(999_999)
    with pytest.raises(NotFoundError):
        await jobs.set_tree(job.id, "no-such-tree")
    assert await jobs.get(999_999) is None


async def test_claims_take_the_oldest_and_never_the_same_job_twice(jobs: PgJobStore) -> None:
    first = await jobs.enqueue(CTX, user_id=7, chat_id=70)
    await jobs.enqueue(CTX, user_id=8, chat_id=80)
    taken = await asyncio.gather(*(jobs.claim() for _ in range(3)))
    ids = [j.id for j in taken if j is not None]
    assert len(ids) == 2 and len(set(ids)) == 2 and first.id in ids
    assert await jobs.claim() is None


async def test_stale_jobs_are_found_and_taken_over_once(
    jobs: PgJobStore, pool: asyncpg.Pool[Any]
) -> None:
    crashed = await jobs.enqueue(CTX, user_id=7, chat_id=70)
    await jobs.claim(crashed.id)
    alive = await jobs.enqueue(CTX, user_id=8, chat_id=80)
    await jobs.claim(alive.id)
    forgotten = await jobs.enqueue(CTX, user_id=9, chat_id=90)  # queued, never claimed
    finished = await jobs.enqueue(CTX, user_id=9, chat_id=90)
    await jobs.fail(finished.id, "boom")
    for job_id in (crashed.id, forgotten.id, finished.id):
        await age(pool, job_id, 3600)
    stale = await jobs.stale(older_than_sec=60)
    assert [j.id for j in stale] == [crashed.id, forgotten.id]
    taken = await asyncio.gather(*(jobs.reclaim(crashed.id, older_than_sec=60) for _ in range(2)))
    winners = [j for j in taken if j is not None]
    assert len(winners) == 1 and winners[0].attempts == 2 and winners[0].status == "running"
    assert await jobs.reclaim(alive.id, older_than_sec=60) is None
    assert [j.id for j in await jobs.stale(older_than_sec=60)] == [forgotten.id]
