"""The stop of a process: take no new work, finish what is in flight, hand back the rest.

A deploy, a rolling restart or systemd sends SIGTERM and waits (Kubernetes: 30 s) before
SIGKILL. One `Drain` is shared by everything in a process that takes work — the inbox
worker, the alert workers, the API's jobs, the resumption of analyses dead processes left.
Once it has begun, none of them claims anything new, and each waits for its work in flight
until one deadline (DRAIN_TIMEOUT_SEC after the first signal). What still runs then is
cancelled, and cancelling hands it back: its row is released at once, so another replica
takes it now rather than when its lease runs out. A second signal cancels the process's
main task: everything is handed back at once.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Awaitable, Collection, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Inside Kubernetes' default grace period of 30 s, with room for the exit itself.
DEFAULT_DRAIN_SEC = 20.0


class Drain:
    """One process's stop: when it began, and how long work in flight may still run."""

    def __init__(self, timeout_sec: float = DEFAULT_DRAIN_SEC) -> None:
        self.timeout_sec = timeout_sec
        self._begun = asyncio.Event()
        self._deadline: float | None = None

    @property
    def begun(self) -> bool:
        return self._begun.is_set()

    def begin(self) -> None:
        """Take no new work from now on; the deadline is `timeout_sec` from the first call."""
        if self._deadline is None:
            self._deadline = time.monotonic() + self.timeout_sec
            self._begun.set()

    async def wait(self) -> None:
        """Until the drain begins."""
        await self._begun.wait()

    def remaining(self) -> float:
        """Seconds left for work in flight (the whole timeout before the drain began)."""
        if self._deadline is None:
            return self.timeout_sec
        return max(0.0, self._deadline - time.monotonic())

    async def until_begun(
        self, awaitable: Awaitable[T], *, limit_sec: float | None = None
    ) -> T | None:
        """`awaitable`'s result, or None when the drain begins first or `limit_sec` passes
        (it is then cancelled). For the waits between two pieces of work — a free slot, a
        wake-up, a long poll — never for the work itself."""
        work = asyncio.ensure_future(awaitable)
        if self.begun:  # nothing more is waited for once the drain has begun
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
            return None
        stop = asyncio.ensure_future(self._begun.wait())
        try:
            await asyncio.wait(
                {work, stop}, timeout=limit_sec, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            stop.cancel()
            if not work.done():
                work.cancel()
            await asyncio.gather(work, stop, return_exceptions=True)
        if work.cancelled():
            return None
        return work.result()

    async def settle(self, tasks: Collection[asyncio.Task[Any]]) -> int:
        """Begin the drain (if it has not begun), wait for `tasks` until the deadline, then
        cancel those still running, which hands their work back. Cancelled itself (a second
        signal), it cancels them all at once. Returns how many were cancelled."""
        self.begin()
        pending = {task for task in tasks if not task.done()}
        try:
            if pending:
                _, pending = await asyncio.wait(pending, timeout=self.remaining())
        finally:
            for task in pending:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return len(pending)


@contextmanager
def stopped_by_signals(drain: Drain) -> Iterator[None]:
    """SIGTERM and SIGINT while the block runs: the first begins `drain`, the second
    cancels the task that entered the block (everything in flight is handed back)."""
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    stops = (signal.SIGTERM, signal.SIGINT)

    def on_signal(sig: signal.Signals) -> None:
        if not drain.begun:
            log.warning(
                "%s: stopping — no new work is taken; what is in flight finishes within "
                "%.0f s (DRAIN_TIMEOUT_SEC), the rest is handed back; a second signal stops "
                "at once",
                sig.name,
                drain.timeout_sec,
            )
            drain.begin()
        elif main is not None:
            log.warning("%s again: stopping now; the work in flight is handed back", sig.name)
            main.cancel()

    for sig in stops:
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        yield
    finally:
        for sig in stops:
            loop.remove_signal_handler(sig)
