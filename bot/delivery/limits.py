"""Per-chat, per-user limits held in PostgreSQL, so they hold across replicas.

- `LeasedChatLocks`: one question per chat at a time (a lease of scope ``chat``, named
  after the chat and the bot answering it).
- `LeasedDeepSlots`: MAX_CONCURRENT_DEEP_PER_USER deep analyses per user (``deep``).
- `SharedWindow`: RATE_LIMIT_PER_MIN questions per user in any 60 s, or an API key's
  calls per minute (``rate_hits``).

While an update is being answered its leases are named after it (`Delivery.holder`):
the inbox worker renews them with the update's own lease, and when the update is
processed again after a crash it gets its own lock back rather than "busy". An
update's chat lock is released with its outcome (`Inbox.finish`), not by a statement
of its own. Outside
an update (tests, the terminal) each claim gets a fresh holder.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.delivery.context import current_delivery
from bot.delivery.ports import Leases, RateHits
from reasoning_core import StoreError

log = logging.getLogger(__name__)


def chat_lock_name(chat_id: int, bot_id: int | None = None) -> str:
    """The lease of a chat's one question: the chat with the bot answering (a user asks
    two bots at once), plain outside an update."""
    if bot_id is None:
        delivery = current_delivery()
        bot_id = delivery.bot_id if delivery is not None else None
    return str(chat_id) if bot_id is None else f"{bot_id}:{chat_id}"


def _holder() -> str:
    delivery = current_delivery()
    return delivery.holder if delivery is not None else f"x{uuid.uuid4().hex}"


#: Pauses between tries of a busy chat's lock before "still working" is said. The
#: previous question's lock goes with its outcome, a statement after its reply is sent:
#: a message sent right after that reply (a quick follow-up, a typed answer to a
#: clarifying question) waits those few moments instead of being turned away.
BUSY_GRACE_SEC: tuple[float, ...] = (0.1, 0.2, 0.4, 0.8)


class LeasedChatLocks:
    """`ChatLocks` across replicas: ``async with locks.claim(chat_id) as claimed``."""

    def __init__(
        self, leases: Leases, *, ttl_sec: float, grace_sec: tuple[float, ...] = BUSY_GRACE_SEC
    ) -> None:
        self._leases = leases
        self._ttl = ttl_sec
        self._grace = grace_sec

    async def _acquire(self, name: str, holder: str) -> bool:
        for pause in (*self._grace, None):
            if await self._leases.acquire("chat", name, holder, limit=1, ttl_sec=self._ttl):
                return True
            if pause is not None:
                await asyncio.sleep(pause)
        return False

    @asynccontextmanager
    async def claim(self, chat_id: int) -> AsyncIterator[bool]:
        holder, name = _holder(), chat_lock_name(chat_id)
        if not await self._acquire(name, holder):
            yield False
            return
        if current_delivery() is not None:
            # The inbox worker drops the lock with the update's outcome (one statement).
            yield True
            return
        try:
            yield True
        finally:
            await _release(self._leases, "chat", name, holder)


class LeasedDeepSlots:
    """`DeepSlotLimiter` across replicas; `running()` counts this process's analyses."""

    def __init__(self, leases: Leases, *, limit: int, ttl_sec: float) -> None:
        self.limit = limit
        self._leases = leases
        self._ttl = ttl_sec
        self._running: dict[int, int] = {}

    def running(self, user_id: int | None = None) -> int:
        if user_id is None:
            return sum(self._running.values())
        return self._running.get(user_id, 0)

    @asynccontextmanager
    async def slot(self, user_id: int) -> AsyncIterator[bool]:
        holder = _holder()
        name = str(user_id)
        if not await self._leases.acquire(
            "deep", name, holder, limit=self.limit, ttl_sec=self._ttl
        ):
            yield False
            return
        self._running[user_id] = self._running.get(user_id, 0) + 1
        try:
            yield True
        finally:
            self._running[user_id] -= 1
            if not self._running[user_id]:
                del self._running[user_id]
            await _release(self._leases, "deep", name, holder)


class SharedWindow:
    """A per-minute limit over ``rate_hits``: a user's questions (RATE_LIMIT_PER_MIN), or,
    with ``scope="api_key"``, an API key's calls; `limit` 0 means unlimited."""

    def __init__(
        self, hits: RateHits, *, limit: int, window_sec: float = 60.0, scope: str = "question"
    ) -> None:
        self.limit = limit
        self._hits = hits
        self._window = window_sec
        self._scope = scope

    async def check(self, key: int) -> float:
        """0 when `key` may go ahead (the hit is counted), else seconds to wait."""
        if self.limit <= 0:
            return 0.0
        try:
            return await self._hits.hit(
                key, _holder(), limit=self.limit, window_sec=self._window, scope=self._scope
            )
        except StoreError as e:  # cannot count: answer rather than refuse
            log.error("could not check the %s rate limit of %s: %s", self._scope, key, e)
            return 0.0


async def _release(leases: Leases, scope: str, name: str, holder: str) -> None:
    try:
        await leases.release(scope, name, holder)
    except StoreError as e:  # the lease runs out by itself
        log.warning("could not release the %s lease of %s: %s", scope, name, e)
