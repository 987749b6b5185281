"""AlertWorker: takes queued alert analyses from PostgreSQL, runs them, posts the reports.

`ALERT_CONCURRENCY` workers claim analyses (``FOR UPDATE SKIP LOCKED``), so the
number running at once is bounded however many alerts arrive; the rest wait in
the table, where a restart finds them. A worker writes a heartbeat while it runs;
an analysis whose heartbeat is old (its process died) is claimed again.

When the process stops (bot/delivery/drain.py) the workers claim nothing new and
finish the analyses they hold; one still running at the drain's deadline is handed
back, queued for any process at once. Its deep job is keyed by the analysis and its
round, so the next process continues its tree, and its report's messages are keyed
in the outbox the same way: posted once, whichever process posts them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.alerts.mapping import unmapped_key
from bot.alerts.posting import AlertPostError, AlertPosting
from bot.alerts.words import note_html
from bot.delivery.context import Delivery, delivering
from bot.delivery.drain import Drain
from reasoning_core import (
    AlertAnalysis,
    AlertStore,
    Answer,
    AnswerEvent,
    Question,
    ReasoningError,
    ReasoningService,
    StoreError,
)

log = logging.getLogger(__name__)

#: The user id alert analyses run as: no person asked them, and Telegram's ids are positive
#: (0 is the terminal's user).
ALERT_USER_ID = -1


class AlertWorker:
    def __init__(
        self,
        *,
        store: AlertStore,
        service: ReasoningService,
        poster: AlertPosting,
        concurrency: int = 2,
        poll_sec: float = 2.0,
        heartbeat_sec: float = 10.0,
        drain: Drain | None = None,
    ) -> None:
        self._store = store
        self._service = service
        self._poster = poster
        self._concurrency = concurrency
        self._poll_sec = poll_sec
        self._heartbeat_sec = heartbeat_sec
        self._drain = drain or Drain()
        self._wake = asyncio.Event()

    def wake(self) -> None:
        """New analyses are queued: look now rather than at the next poll."""
        self._wake.set()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[AlertWorker]:
        """The workers claim and investigate while the block runs; on its exit they finish
        what they hold until the drain's deadline (cancelled, they hand it back at once)."""
        tasks = [asyncio.create_task(self._loop()) for _ in range(self._concurrency)]
        try:
            yield self
            await self._drain.settle(tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _loop(self) -> None:
        while not self._drain.begun:
            try:
                analysis = await self._store.claim(stale_after_sec=3 * self._heartbeat_sec)
            except StoreError as e:
                log.error("could not claim an alert analysis: %s", e)
                analysis = None
            if analysis is None:
                self._wake.clear()
                await self._drain.until_begun(self._wake.wait(), limit_sec=self._poll_sec)
                continue
            await self._handle(analysis)

    async def _handle(self, analysis: AlertAnalysis) -> None:
        beat = asyncio.create_task(self._beat(analysis.id))
        try:
            try:
                answer = await self._investigate(analysis)
                header = _header(analysis)
            except ReasoningError as e:  # the alert is still posted, saying it failed
                log.error(
                    "investigating alert analysis %s (%s) failed: %s",
                    analysis.id,
                    analysis.alertname,
                    e,
                )
                answer, header = None, _header(analysis, failed=True)
            chats = _report_chats(analysis)
            with delivering(Delivery(item_id=analysis.id, name=_holder(analysis))):
                messages = await self._poster.post(analysis, header, answer, chats=chats)
            kept = [m for m in analysis.messages if m.chat_id not in chats]  # their reports
            done = await self._store.posted(
                analysis.id, answer=answer, report_html=header, messages=[*kept, *messages]
            )
            if done.resolved_at is not None and await self._store.take_resolved_edit(done.id):
                await self._poster.mark_resolved(done, done.resolved_at)
            if answer is not None:
                await self._poster.post_charts(analysis, answer, chats=chats)
        except asyncio.CancelledError:  # stopping before it finished: another process takes it
            await self._hand_back(analysis)
            raise
        except (ReasoningError, AlertPostError) as e:
            log.error("alert analysis %s (%s) failed: %s", analysis.id, analysis.alertname, e)
            await self._failed(analysis, str(e))
        except Exception as e:  # a bug must not stop this worker: logged, recorded, next one
            log.exception("alert analysis %s (%s) failed", analysis.id, analysis.alertname)
            await self._failed(analysis, type(e).__name__)
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat

    async def _hand_back(self, analysis: AlertAnalysis) -> None:
        try:
            await self._store.hand_back(analysis.id)
        except StoreError as e:  # its heartbeat grows old: claimed again later
            log.warning("could not hand back alert analysis %s: %s", analysis.id, e)
            return
        log.info("alert analysis %s handed back unfinished: another process takes it", analysis.id)

    async def _failed(self, analysis: AlertAnalysis, why: str) -> None:
        try:
            await self._store.failed(analysis.id, why)
        except StoreError as e:  # still running with an old heartbeat: claimed again later
            log.error("could not record the failure of alert analysis %s: %s", analysis.id, e)

    async def _investigate(self, analysis: AlertAnalysis) -> Answer | None:
        if analysis.runbook is None:
            # The header says there is no runbook; what changed around the alert, when the
            # change scan finds its subject (a refused label value is never scanned).
            if not unmapped_key(analysis.dedup_key):
                return None
            return await self._service.scan_around(
                analysis.matchers, onset=analysis.started_at, language=analysis.language
            )
        question = Question(
            text=analysis.question,
            user_id=ALERT_USER_ID,
            chat_id=analysis.chats[0],
            key=f"alert:{_holder(analysis)}",
        )
        answer: Answer | None = None
        events = self._service.investigate(
            question,
            parameters=analysis.parameters,
            language=analysis.language,
            runbook=analysis.runbook,
            onset=analysis.started_at,
            condition=analysis.condition,
        )
        async for event in events:
            if isinstance(event, AnswerEvent):
                answer = event.answer
        return answer

    async def _beat(self, analysis_id: int) -> None:
        while True:
            await asyncio.sleep(self._heartbeat_sec)
            try:
                await self._store.heartbeat(analysis_id)
            except StoreError as e:
                log.warning("heartbeat of alert analysis %s failed: %s", analysis_id, e)


def _holder(analysis: AlertAnalysis) -> str:
    """The analysis in this round: its deep job's key and its replies' outbox keys."""
    return f"a{analysis.id}.{analysis.round}"


def _report_chats(analysis: AlertAnalysis) -> list[int]:
    """Where the report goes: the chat that pressed "Investigate again" only (the others
    keep the report they have), else every chat the alert routes to."""
    if analysis.again_chat is not None and analysis.again_chat in analysis.chats:
        return [analysis.again_chat]
    return list(analysis.chats)


def _header(analysis: AlertAnalysis, *, failed: bool = False) -> str:
    """The stored header (the receiver wrote it with the alert's labels) plus the note.
    A report posted before stored its header with the note as its last line: an
    investigation again replaces that note rather than adding a second one."""
    language = analysis.language
    base = analysis.report_html or ""
    if analysis.messages:
        base = base.rsplit("\n", 1)[0]
    if failed:
        return f"{base}\n{note_html('failed', language)}"
    if analysis.runbook is not None:
        return f"{base}\n{note_html('investigated', language, runbook=analysis.runbook)}"
    return f"{base}\n{analysis.question}"
