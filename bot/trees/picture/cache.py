"""A small LRU of rendered pictures that also shares renders already under way."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable


class RenderCache:
    """Up to `size` results by key; concurrent misses of one key share one render.

    Failures are not kept: the next request tries again.
    """

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._done: OrderedDict[Hashable, bytes] = OrderedDict()
        self._running: dict[Hashable, asyncio.Task[bytes]] = {}

    def __len__(self) -> int:
        return len(self._done)

    def get(self, key: Hashable) -> bytes | None:
        value = self._done.get(key)
        if value is not None:
            self._done.move_to_end(key)
        return value

    async def get_or_make(self, key: Hashable, make: Callable[[], Awaitable[bytes]]) -> bytes:
        """The cached value, or the result of `make()` (run once for concurrent callers)."""
        cached = self.get(key)
        if cached is not None:
            return cached
        task = self._running.get(key)
        if task is None:
            task = asyncio.ensure_future(make())
            self._running[key] = task
            task.add_done_callback(lambda done: self._finished(key, done))
        # A caller that gives up (its own timeout) must not cancel the others' render.
        return await asyncio.shield(task)

    def _finished(self, key: Hashable, task: asyncio.Task[bytes]) -> None:
        self._running.pop(key, None)
        if task.cancelled() or task.exception() is not None:
            return
        self._done[key] = task.result()
        self._done.move_to_end(key)
        while len(self._done) > self._size:
            self._done.popitem(last=False)
