"""A priority semaphore: at most N pieces of work at once, the most urgent waiter next.

`asyncio.Semaphore` wakes waiters first come, first served; the explorer needs
its search order (breadth-first, depth-first, best-first) to decide which
waiting planner call or check starts when a slot frees up. Priorities are
tuples, smaller first; ties go to the earlier request. An analysis has two:
one for model calls (the scarce resource) and one for tool runs (cheap and
local), so neither kind of work waits behind the other.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from reasoning_core.explore.policy import Priority


class PriorityScheduler:
    """Hands out `slots` concurrency slots, waiters ordered by priority."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("the scheduler needs at least one slot")
        self._free = slots
        self._waiters: list[tuple[Priority, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        #: Most slots held at once, and slots handed out in all.
        self.peak = 0
        self.granted = 0
        self._busy = 0

    @property
    def busy(self) -> int:
        """Slots held now."""
        return self._busy

    @asynccontextmanager
    async def slot(self, priority: Priority) -> AsyncIterator[None]:
        """Hold one slot for the body of the `async with`."""
        await self._acquire(priority)
        self._busy += 1
        self.granted += 1
        self.peak = max(self.peak, self._busy)
        try:
            yield
        finally:
            self._busy -= 1
            self._release()

    async def _acquire(self, priority: Priority) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._order), waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # granted and cancelled at once: pass the slot on
            raise

    def _release(self) -> None:
        while self._waiters:
            _, _, waiter = heapq.heappop(self._waiters)
            if not waiter.done():
                waiter.set_result(None)  # the slot moves to this waiter
                return
        self._free += 1
