"""Updates in, exactly once: stored before they are acknowledged, processed under a lease.

`store_update` is what long polling and the webhook both call for each update: a
well-formed one goes into the inbox (a redelivery is a no-op); one too large or
malformed is stored as rejected with the reason and never processed.

`InboxWorker` runs in every process: it claims the oldest update nobody holds (or
whose holder's lease ran out — the holder died), renews the lease while the
dispatcher answers it, and records the outcome. An update that keeps killing its
processor comes back at most `max_attempts` times; then the user is told once and
the update is failed. An update that could not be answered because the database
went away is postponed, not failed: it is answered once the database is back.
Long polling and the webhook store through `InboxWorker.receiving`: an update that
arrives while the worker has a free slot (and no older update waits) is stored and
claimed in one statement and answered at once, without a claim round trip.

When the process stops (bot/delivery/drain.py) the worker claims nothing more, lets
the updates it holds finish until the drain's deadline, and hands back the rest
(pending again, no lease to run out): another process takes them at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import Bot, Dispatcher
from aiogram.types import Update
from pydantic import ValidationError

from bot.delivery.context import Delivery, delivering
from bot.delivery.drain import Drain
from bot.delivery.limits import chat_lock_name
from bot.delivery.ports import Arrival, Inbox, InboxItem, Leases
from reasoning_core import N_, StoreError, StoreUnavailableError, detect_language, gettext

log = logging.getLogger(__name__)

#: Far above any real update (a 4096-character message with entities is ~30 KB).
MAX_UPDATE_BYTES = 256 * 1024

_POISON = N_(
    "Sorry — I could not process your message after several attempts, so I have "
    "set it aside. Please send it again in other words; if it keeps happening, tell "
    "your admin."
)


def process_name() -> str:
    """This process among the replicas: host and pid, for the inbox's owner column."""
    return f"{socket.gethostname()}:{os.getpid()}"


def update_chat_id(payload: dict[str, Any]) -> int | None:
    """The chat an update comes from, read from its raw JSON."""
    for field in ("message", "edited_message", "callback_query"):
        body = payload.get(field)
        if not isinstance(body, dict):
            continue
        if field == "callback_query":
            body = body.get("message")
            if not isinstance(body, dict):
                continue
        chat = body.get("chat")
        if isinstance(chat, dict) and isinstance(chat.get("id"), int):
            return int(chat["id"])
    return None


async def store_update(inbox: Inbox, payload: Any, *, size: int | None = None) -> bool:
    """Put one raw update into the bot's inbox; True when it is new and will be processed.

    A well-formed update is stored as aiogram reads it (the same JSON whether it came by
    polling or by the webhook, so a copy is recognised either way). Raises `StoreError`
    when the database cannot take it: the caller must then not acknowledge the update
    (Telegram delivers it again).
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("update_id"), int):
        log.warning("an update without an update_id was dropped: nothing to store it under")
        return False
    update_id: int = payload["update_id"]
    size = size if size is not None else len(json.dumps(payload, ensure_ascii=False))
    if size > MAX_UPDATE_BYTES:
        reason = f"too large: {size:,} bytes (the limit is {MAX_UPDATE_BYTES:,})"
        log.warning("update %s rejected: %s", update_id, reason)
        await inbox.reject(update_id, {"update_id": update_id, "size": size}, reason)
        return False
    try:
        update = Update.model_validate(payload)
    except ValidationError as e:
        reason = f"malformed: {e.error_count()} problem(s), first: {e.errors()[0]['msg']}"
        log.warning("update %s rejected: %s", update_id, reason)
        await inbox.reject(update_id, payload, reason)
        return False
    payload = _without_nul(update.model_dump(mode="json", exclude_none=True, by_alias=True))
    try:
        arrival = await inbox.add(update_id, payload, chat_id=update_chat_id(payload))
    except StoreUnavailableError:
        raise
    except StoreError as e:  # this update, not the database: never block the ones after it
        log.error("update %s rejected: the database refused it: %s", update_id, e)
        await inbox.reject(update_id, {"update_id": update_id}, f"refused by the database: {e}")
        return False
    note_reused(update_id, arrival)
    return arrival != "redelivery"


def note_reused(update_id: int, arrival: Arrival) -> None:
    """The one warning for an update whose id its bot used before for another body."""
    if arrival == "reused":
        log.warning(
            "update %s has the id of an earlier update with another body (Telegram picks "
            "ids anew after a week of silence): processed as a new update",
            update_id,
        )


def _without_nul(value: Any) -> Any:
    """PostgreSQL's JSON cannot hold NUL characters; the text normaliser drops them anyway."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {k: _without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    return value


class InboxWorker:
    """Claims updates from the inbox and feeds them to the dispatcher, `concurrency` at once."""

    def __init__(
        self,
        *,
        inbox: Inbox,
        leases: Leases,
        dispatcher: Dispatcher,
        bot: Bot,
        lease_sec: float = 10.0,
        concurrency: int = 8,
        max_attempts: int = 3,
        idle_poll_sec: float = 0.5,
        owner: str | None = None,
        on_idle: Callable[[], Awaitable[None]] | None = None,
        drain: Drain | None = None,
    ) -> None:
        self._inbox = inbox
        self._leases = leases
        self._dp = dispatcher
        self._bot = bot
        self.lease_sec = lease_sec
        self._slots = asyncio.Semaphore(concurrency)
        self._max_attempts = max_attempts
        self._idle_poll = idle_poll_sec
        self.owner = owner or process_name()
        self._on_idle = on_idle
        self._drain = drain or Drain()
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._running = False
        self.processed = 0
        #: What long polling and the webhook store into: claims for this worker as it
        #: stores when a slot is free.
        self.receiving: Inbox = _ReceivingInbox(inbox, self)

    def wake(self) -> None:
        """New updates were stored here: look now rather than at the next poll."""
        self._wake.set()

    async def run(self) -> None:
        """Claim and process until the drain begins, then let the updates in flight finish
        until its deadline and hand back the rest (bot/delivery/drain.py); cancelled, hand
        everything back at once. The database going away only pauses it."""
        idle_work = asyncio.create_task(self._idle_loop())
        self._running = True
        try:
            await self._claim_until_drained()
            await self._drain.settle([idle_work, *self._tasks])
        finally:
            self._running = False
            for task in (idle_work, *self._tasks):
                task.cancel()
            await asyncio.gather(idle_work, *self._tasks, return_exceptions=True)

    async def _claim_until_drained(self) -> None:
        drain, pause = self._drain, self._idle_poll
        while not drain.begun:
            if not await drain.until_begun(self._slots.acquire()):
                return
            if drain.begun:
                self._slots.release()
                return
            try:  # never cancelled by the drain: a claimed row is always processed
                item = await self._inbox.claim(self.owner, lease_sec=self.lease_sec)
            except StoreError as e:
                self._slots.release()
                log.error("cannot claim updates from the inbox: %s", e)
                await drain.until_begun(asyncio.sleep(pause))
                pause = min(pause * 2, self.lease_sec)
                continue
            pause = self._idle_poll
            if item is None:
                self._slots.release()
                self._wake.clear()
                await drain.until_begun(self._wake.wait(), limit_sec=self._idle_poll)
                continue
            self._start(item)

    def _start(self, item: InboxItem) -> None:
        """Process a claimed update in its own task (its slot is held and released there)."""
        task = asyncio.create_task(self._process_and_release(item))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def receive(
        self, update_id: int, payload: dict[str, Any], *, chat_id: int | None
    ) -> Arrival:
        """Store a new update; with a slot free, claimed in the same statement and processed
        at once. "new" or "reused" when it waits in the inbox for a claim (wake a worker);
        "redelivery" when nothing waits (a copy, or an update being processed already)."""
        if not await self._reserve():
            return await self._inbox.add(update_id, payload, chat_id=chat_id)
        item = None
        try:
            arrival, item = await self._inbox.add_claimed(
                update_id, payload, chat_id=chat_id, owner=self.owner, lease_sec=self.lease_sec
            )
        finally:
            if item is None:
                self._slots.release()
        if item is not None:
            note_reused(update_id, arrival)  # store_update hears "redelivery": not twice
            self._start(item)
            return "redelivery"  # nothing waits: no wake-up
        return arrival

    async def _reserve(self) -> bool:
        """Take a processing slot if one is free now (only while the worker runs and takes
        new work: while it drains, a new update waits in the inbox for another process)."""
        if not self._running or self._drain.begun or self._slots.locked():
            return False
        await self._slots.acquire()  # free: returns at once
        return True

    async def _idle_loop(self) -> None:
        """Work that must go on all the time (resuming unkeyed deep jobs), every lease."""
        if self._on_idle is None:
            return
        while not self._drain.begun:
            try:
                await self._on_idle()
            except Exception:
                log.exception("periodic recovery failed")
            await self._drain.until_begun(asyncio.sleep(self.lease_sec))

    async def _process_and_release(self, item: InboxItem) -> None:
        try:
            await self.process(item)
        finally:
            self._slots.release()

    async def process(self, item: InboxItem) -> None:
        """Answer one claimed update and record the outcome (never raises, but cancels)."""
        delivery = Delivery(item_id=item.id, bot_id=item.bot_id, attempt=item.attempts)
        beat = asyncio.create_task(self._renew(item, delivery))
        try:
            with delivering(delivery):
                status, error = await self._answer(item, delivery)
            if delivery.retry_later:
                log.warning("update %s postponed: the database is unreachable", item.update_id)
                await self._inbox.retry_later(
                    item.id,
                    self.owner,
                    after_sec=self.lease_sec,
                    release_chat=delivery.holder,
                )
            else:
                # The chat lock the update took (bot/delivery/limits.py) goes with its outcome.
                await self._inbox.finish(
                    item.id,
                    self.owner,
                    status=status,
                    error=error,
                    release_chat=delivery.holder,
                )
            self.processed += 1
        except StoreError as e:  # the lease runs out and the update is answered again
            log.error("could not record the outcome of update %s: %s", item.update_id, e)
            await self._release_chat(item, delivery)
        except asyncio.CancelledError:  # stopping before it finished: another process takes it
            await self._hand_back(item, delivery)
            raise
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat

    async def _hand_back(self, item: InboxItem, delivery: Delivery) -> None:
        """The update back to the inbox, claimable by any process at once, with its chat
        lock released (a deep job it started is continued from its saved tree)."""
        try:
            await self._inbox.hand_back(item.id, self.owner, release_chat=delivery.holder)
        except StoreError as e:  # its lease runs out by itself
            log.warning("could not hand back update %s: %s", item.update_id, e)
            await self._release_chat(item, delivery)
            return
        log.info("update %s handed back unfinished: another process takes it", item.update_id)

    async def _release_chat(self, item: InboxItem, delivery: Delivery) -> None:
        """The update's chat lock, when its outcome could not carry it away (the update
        itself stays claimed until its lease runs out)."""
        if item.chat_id is None:
            return
        try:
            await self._leases.release(
                "chat", chat_lock_name(item.chat_id, item.bot_id), delivery.holder
            )
        except StoreError as e:  # the lease runs out by itself
            log.warning("could not release the chat lock of update %s: %s", item.update_id, e)

    async def _answer(self, item: InboxItem, delivery: Delivery) -> tuple[str, str | None]:
        if item.attempts > self._max_attempts:
            log.error(
                "update %s was claimed %d times without an outcome (its processor dies): "
                "failed, and its user told",
                item.update_id,
                item.attempts,
            )
            await self._tell_poisoned(item)
            return "failed", f"poison: claimed {item.attempts} times"
        try:
            update = Update.model_validate(item.payload, context={"bot": self._bot})
        except ValidationError as e:  # stored before validation existed, or by hand
            return "rejected", f"malformed: {e.errors()[0]['msg']}"
        await self._dp.feed_update(self._bot, update)
        return "done", None

    async def _tell_poisoned(self, item: InboxItem) -> None:
        if item.chat_id is None:
            return
        delivery = Delivery(
            item_id=item.id, bot_id=item.bot_id, attempt=item.attempts, sent=10_000
        )
        message = item.payload.get("message") or item.payload.get("edited_message") or {}
        text = message.get("text") if isinstance(message, dict) else None
        language = detect_language(text) if isinstance(text, str) and text else "en"
        with delivering(delivery):  # key i{row}:10000: the notice is sent once
            await self._bot.send_message(item.chat_id, gettext(language, _POISON))

    async def _renew(self, item: InboxItem, delivery: Delivery) -> None:
        """Keep the update's lease (and its chat lock, deep slot) alive while it runs."""
        while True:
            await asyncio.sleep(self.lease_sec / 3)
            try:
                held = await self._inbox.renew(item.id, self.owner, lease_sec=self.lease_sec)
                await self._leases.renew_all(delivery.holder, ttl_sec=self.lease_sec)
            except StoreError as e:
                log.warning("could not renew the lease of update %s: %s", item.update_id, e)
                continue
            if not held:
                log.warning("update %s was taken over by another process", item.update_id)


class _ReceivingInbox:
    """The inbox as long polling and the webhook see it: an update stored while the
    worker has a free slot is claimed in the same statement and processed at once
    (`add` then returns "redelivery": nothing waits, no wake-up and no claim round trip).
    Everything else is the inbox's own."""

    def __init__(self, inbox: Inbox, worker: InboxWorker) -> None:
        self._inbox = inbox
        self._worker = worker

    async def add(
        self, update_id: int, payload: dict[str, Any], *, chat_id: int | None
    ) -> Arrival:
        return await self._worker.receive(update_id, payload, chat_id=chat_id)

    async def add_claimed(
        self,
        update_id: int,
        payload: dict[str, Any],
        *,
        chat_id: int | None,
        owner: str,
        lease_sec: float,
    ) -> tuple[Arrival, InboxItem | None]:
        return await self._inbox.add_claimed(
            update_id, payload, chat_id=chat_id, owner=owner, lease_sec=lease_sec
        )

    async def reject(self, update_id: int, payload: dict[str, Any], reason: str) -> None:
        await self._inbox.reject(update_id, payload, reason)

    async def claim(self, owner: str, *, lease_sec: float) -> InboxItem | None:
        return await self._inbox.claim(owner, lease_sec=lease_sec)

    async def renew(self, item_id: int, owner: str, *, lease_sec: float) -> bool:
        return await self._inbox.renew(item_id, owner, lease_sec=lease_sec)

    async def finish(
        self,
        item_id: int,
        owner: str,
        *,
        status: str = "done",
        error: str | None = None,
        release_chat: str | None = None,
    ) -> None:
        await self._inbox.finish(
            item_id, owner, status=status, error=error, release_chat=release_chat
        )

    async def retry_later(
        self, item_id: int, owner: str, *, after_sec: float, release_chat: str | None = None
    ) -> None:
        await self._inbox.retry_later(
            item_id, owner, after_sec=after_sec, release_chat=release_chat
        )

    async def hand_back(
        self, item_id: int, owner: str, *, release_chat: str | None = None
    ) -> None:
        await self._inbox.hand_back(item_id, owner, release_chat=release_chat)
