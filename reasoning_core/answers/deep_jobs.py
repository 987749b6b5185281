"""DeepJobRunner: deep analyses as durable jobs that survive a crash of the process.

`submit` queues a job, claims it and runs the `DeepAnalyst`, passing its events
on: the tree id is recorded as soon as the tree exists, a heartbeat is written
every `heartbeat_sec` while it runs, and the job ends done (with the answer) or
failed. If the process dies meanwhile, the job stays ``running`` and its
heartbeat grows old; `resume_stale` (called at start-up) takes such jobs over,
continues each from its saved tree (completed checks are not run again) and
hands the answer to `deliver`, which sends it to the user.

Cancellation (the process stops before the analysis could finish) is never a
failure: the job stays running, to be continued from its tree. A keyed job comes
back with its question (the front end hands the question back); an unkeyed one is
released, stale at once, so another process resumes it now.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.errors import StoreError
from reasoning_core.events import (
    AnswerEvent,
    Event,
    ReasoningEvent,
    ReasoningStartedEvent,
    TreeCreatedEvent,
)
from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Answer, as_language
from reasoning_core.ports import Job, JobStore
from reasoning_core.ports.planning import PlanningContext

log = logging.getLogger(__name__)

Deliver = Callable[[Job, Answer], Awaitable[None]]

_WORDS: dict[str, str] = {
    "queued": N_("Deep analysis queued"),
    "started": N_("Deep analysis started"),
    "interrupted": N_("it was interrupted {count} times"),
    "gave_up": N_("Sorry — I could not finish the deep analysis of {question!r}: {why}."),
}


class DeepJobRunner:
    """Runs deep analyses as jobs of a `JobStore`, and resumes the stale ones."""

    def __init__(
        self,
        jobs: JobStore,
        analyst: DeepAnalyst,
        *,
        heartbeat_sec: float = 10.0,
        stale_after_sec: float | None = None,
        max_attempts: int = 3,
    ) -> None:
        self._jobs = jobs
        self._analyst = analyst
        self._heartbeat_sec = heartbeat_sec
        #: A running job whose heartbeat is older than this belongs to a dead process.
        self.stale_after_sec = stale_after_sec or 3 * heartbeat_sec
        self._max_attempts = max_attempts

    async def submit(
        self, ctx: PlanningContext, *, user_id: int, chat_id: int, key: str | None = None
    ) -> AsyncIterator[Event]:
        """Queue the analysis as a job and run it here; yields its events.

        With a `key` (the front end's id of the question) seen before, the job of that
        key is continued from its saved tree, or its stored answer is the answer: the
        question is being answered again because the process that had it died.
        """
        job = await self._jobs.enqueue(ctx, user_id=user_id, chat_id=chat_id, key=key)
        if key is not None and job.attempts > 0:
            async for event in self._again(job):
                yield event
            return
        claimed = await self._jobs.claim(job.id)
        if claimed is None:  # another worker took it: it will answer
            yield ReasoningEvent(message=gettext(ctx.language, _WORDS["queued"]), job_id=job.id)
            return
        yield ReasoningStartedEvent(
            message=gettext(ctx.language, _WORDS["started"]), job_id=job.id
        )
        async for event in self._run(claimed):
            yield event

    async def _again(self, job: Job) -> AsyncIterator[Event]:
        """A keyed job met again: its stored answer, or the analysis continued here."""
        if job.status == "done" and job.answer is not None:
            log.info("deep-analysis job %s is done: its answer is sent again", job.id)
            yield AnswerEvent(answer=job.answer)
            return
        taken = None if job.status == "failed" else await self._jobs.take_over(job.id)
        if taken is None:  # failed (or finished meanwhile): say so once
            done = await self._jobs.get(job.id)
            if done is not None and done.status == "done" and done.answer is not None:
                yield AnswerEvent(answer=done.answer)
                return
            why = (done.error if done else None) or job.error or "no answer"
            yield AnswerEvent(answer=_gave_up(job, why))
            return
        log.info(
            "continuing deep-analysis job %s (attempt %d, tree %s)",
            taken.id,
            taken.attempts,
            taken.tree_id,
        )
        if taken.attempts > self._max_attempts:
            why = gettext(taken.context.language, _WORDS["interrupted"]).format(
                count=taken.attempts - 1
            )
            await self._jobs.fail(taken.id, why)
            yield AnswerEvent(answer=_gave_up(taken, why))
            return
        async for event in self._run(taken):
            yield event

    async def resume_stale(self, deliver: Deliver) -> int:
        """Take over the jobs of crashed processes and finish them; returns how many."""
        stale = await self._jobs.stale(older_than_sec=self.stale_after_sec)
        results = await asyncio.gather(
            *(self._resume(job.id, deliver) for job in stale), return_exceptions=True
        )
        for job, result in zip(stale, results, strict=True):
            if isinstance(result, BaseException):
                log.error("resuming deep-analysis job %s failed: %r", job.id, result)
        return sum(1 for r in results if r is True)

    async def _resume(self, job_id: int, deliver: Deliver) -> bool:
        job = await self._jobs.reclaim(job_id, older_than_sec=self.stale_after_sec)
        if job is None:
            return False
        log.info(
            "resuming deep-analysis job %s (attempt %d, tree %s)",
            job.id,
            job.attempts,
            job.tree_id,
        )
        if job.attempts > self._max_attempts:
            why = gettext(job.context.language, _WORDS["interrupted"]).format(
                count=job.attempts - 1
            )
            await self._jobs.fail(job.id, why)
            answer = _gave_up(job, why)
        else:
            answer = None
            async for event in self._run(job):
                if isinstance(event, AnswerEvent):
                    answer = event.answer
        if answer is not None:
            await deliver(job, answer)
        return True

    async def _run(self, job: Job) -> AsyncIterator[Event]:
        heartbeat = asyncio.create_task(self._beat(job.id))
        answer: Answer | None = None
        try:
            run = self._analyst.run(
                job.context, user_id=job.user_id, chat_id=job.chat_id, tree_id=job.tree_id
            )
            async for event in run:
                if isinstance(event, TreeCreatedEvent) and job.tree_id is None:
                    await self._record_tree(job.id, event.tree_id)
                if isinstance(event, AnswerEvent):
                    answer = event.answer
                yield event
        except asyncio.CancelledError:
            await self._release(job)
            raise
        except Exception as e:
            await self._finish(job, None, f"{type(e).__name__}: {e}")
            raise
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
        await self._finish(job, answer, None)

    async def _finish(self, job: Job, answer: Answer | None, error: str | None) -> None:
        try:
            if answer is not None and answer.error is None:
                await self._jobs.complete(job.id, answer)
            else:
                why = error or (answer.uncertainty_reason if answer else None) or "no answer"
                await self._jobs.fail(job.id, why)
        except StoreError as e:
            log.error("could not record the end of deep-analysis job %s: %s", job.id, e)

    async def _release(self, job: Job) -> None:
        if job.key is not None:  # resumed when its question is answered again
            return
        try:
            await self._jobs.release(job.id)
        except StoreError as e:  # its heartbeat grows old by itself
            log.warning("could not release deep-analysis job %s: %s", job.id, e)

    async def _record_tree(self, job_id: int, tree_id: str) -> None:
        try:
            await self._jobs.set_tree(job_id, tree_id)
        except StoreError as e:  # the analysis goes on; only a resume would miss the tree
            log.error("could not record tree %s of deep-analysis job %s: %s", tree_id, job_id, e)

    async def _beat(self, job_id: int) -> None:
        while True:
            await asyncio.sleep(self._heartbeat_sec)
            try:
                await self._jobs.heartbeat(job_id)
            except StoreError as e:
                log.warning("heartbeat of deep-analysis job %s failed: %s", job_id, e)


def _gave_up(job: Job, why: str) -> Answer:
    text = gettext(job.context.language, _WORDS["gave_up"]).format(question=job.question, why=why)
    return Answer(
        strategy="deep",
        text=text,
        confidence=0.0,
        uncertainty_reason=why,
        tree_id=job.tree_id,
        error="deep_failed",
        language=as_language(job.context.language),
    )
