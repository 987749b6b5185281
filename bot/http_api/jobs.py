"""JobBoard: asynchronous API questions running in the background, their events kept for SSE.

A job is the rest of one `ReasoningService.ask` stream, run in its own task, so a
client that disconnects (from ``/events``, or altogether) changes nothing: the
job goes on and its answer is stored (``api_jobs``). Its events are kept in
memory while it runs and for `keep_sec` after, for any number of followers; a
follower that comes later, or to another replica, gets the stored status and,
once done, the answer.

Event names on the stream: ``reasoning_started`` (the first), ``reasoning`` (a
tree step: the service's event kind, message and data), ``reflection``,
``plan_revised``, and last ``completed`` with the Answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from bot.delivery.drain import Drain
from reasoning_core import Answer, AnswerEvent, ApiJobStore, Event, StoreError

log = logging.getLogger(__name__)

SseEvent = tuple[str, dict[str, Any]]
_PASSED_THROUGH = {"reflection", "plan_revised"}
_POLL_SEC = 1.0


def sse_event(event: Event, *, first: bool) -> SseEvent:
    """The stream's name and data for one service event (the event's fields as ``data``,
    under the names clients have always read)."""
    if isinstance(event, AnswerEvent):
        return "completed", {"answer": event.answer.model_dump(mode="json")}
    if event.kind == "reasoning_started" and first:
        return "reasoning_started", {"message": event.message}
    name = event.kind if event.kind in _PASSED_THROUGH else "reasoning"
    return name, {"kind": event.kind, "message": event.message, "data": event.payload()}


@dataclass
class _LiveJob:
    id: str
    key_id: int
    events: list[SseEvent] = field(default_factory=list)
    done: bool = False
    finished_at: float | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, item: SseEvent) -> None:
        self.events.append(item)
        self.changed.set()

    def close(self) -> None:
        self.done = True
        self.finished_at = time.monotonic()
        self.changed.set()


class JobBoard:
    def __init__(
        self, store: ApiJobStore, *, keep_sec: float = 600.0, drain: Drain | None = None
    ) -> None:
        self._store = store
        self._keep_sec = keep_sec
        self._drain = drain or Drain()
        self._live: dict[str, _LiveJob] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(
        self,
        job_id: str,
        *,
        key_id: int,
        question: str,
        seen: list[Event],
        rest: AsyncIterator[Event],
    ) -> None:
        """Record the job and run the rest of the stream in the background."""
        self._prune()
        await self._store.create(job_id, key_id=key_id, question=question)
        live = _LiveJob(job_id, key_id)
        for event in seen:
            live.add(sse_event(event, first=not live.events))
        self._live[job_id] = live
        task = asyncio.create_task(self._run(live, rest))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, live: _LiveJob, rest: AsyncIterator[Event]) -> None:
        answer: Answer | None = None
        try:
            async for event in rest:
                live.add(sse_event(event, first=not live.events))
                if isinstance(event, AnswerEvent):
                    answer = event.answer
                elif event.message:
                    await self._progress(live.id, event.message)
            await self._store.finish(live.id, status="done", answer=answer)
        except Exception as e:  # the job's own failure: stored, and the stream ends
            log.exception("API job %s failed", live.id)
            with contextlib.suppress(StoreError):
                await self._store.finish(live.id, status="failed", answer=None)
            live.add(("error", {"error": type(e).__name__}))
        finally:
            live.close()

    async def _progress(self, job_id: str, text: str) -> None:
        try:
            await self._store.progress(job_id, text)
        except StoreError as e:  # the job goes on; only the status line is stale
            log.warning("could not record the progress of API job %s: %s", job_id, e)

    async def follow(self, job_id: str) -> AsyncIterator[SseEvent]:
        """Every event of the job from the first, then new ones until it is done."""
        live = self._live.get(job_id)
        if live is None:
            async for item in self._follow_stored(job_id):
                yield item
            return
        sent = 0
        while True:
            live.changed.clear()
            while sent < len(live.events):
                yield live.events[sent]
                sent += 1
            if live.done:
                return
            await live.changed.wait()

    async def _follow_stored(self, job_id: str) -> AsyncIterator[SseEvent]:
        """A job of another process (or of before a restart): its status until it ends."""
        while True:
            job = await self._store.get(job_id)
            if job is None:
                return
            if job.status != "running":
                if job.answer is not None:
                    yield "completed", {"answer": job.answer.model_dump(mode="json")}
                else:
                    yield "error", {"error": "the job failed"}
                return
            await asyncio.sleep(_POLL_SEC)

    def owner(self, job_id: str) -> int | None:
        """The key id of a live job (None: not live here)."""
        live = self._live.get(job_id)
        return None if live is None else live.key_id

    @property
    def stopping(self) -> bool:
        """The process is stopping: no new job is taken."""
        return self._drain.begun

    async def aclose(self) -> None:
        """Let the running jobs finish until the drain's deadline; the rest are cancelled
        (their deep analyses stay durable and are resumed by another process)."""
        await self._drain.settle(list(self._tasks))

    async def wait_idle(self) -> None:
        """Until every running job has ended (tests and benchmarks)."""
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _prune(self) -> None:
        now = time.monotonic()
        old = [
            job_id
            for job_id, live in self._live.items()
            if live.finished_at is not None and now - live.finished_at > self._keep_sec
        ]
        for job_id in old:
            del self._live[job_id]
