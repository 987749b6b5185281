"""The drain: work in flight finishes until the deadline, the rest is cancelled (which hands
it back), a wait between two pieces of work ends when the drain begins. Asserted by what
happened to the tasks, never by how long it took."""

from __future__ import annotations

import asyncio

from bot.delivery.drain import Drain


async def test_work_that_finishes_in_time_is_not_cancelled() -> None:
    release = asyncio.Event()
    drain = Drain(timeout_sec=60)

    async def work() -> str:
        await release.wait()
        return "recorded"

    task = asyncio.create_task(work())
    settling = asyncio.create_task(drain.settle([task]))
    await asyncio.sleep(0)
    assert drain.begun and not settling.done()
    release.set()
    assert await settling == 0
    assert task.result() == "recorded"


async def test_work_still_running_at_the_deadline_is_cancelled_and_hands_back() -> None:
    handed_back: list[str] = []
    drain = Drain(timeout_sec=0)

    async def work() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            handed_back.append("update 7")
            raise

    task = asyncio.create_task(work())
    await asyncio.sleep(0)
    assert await drain.settle([task]) == 1
    assert task.cancelled() and handed_back == ["update 7"]


async def test_a_second_signal_cancels_the_settling_and_the_work_at_once() -> None:
    drain = Drain(timeout_sec=3600)
    work = asyncio.create_task(asyncio.Event().wait())
    settling = asyncio.create_task(drain.settle([work]))
    await asyncio.sleep(0)
    settling.cancel()  # what the second SIGTERM does to the main task
    await asyncio.gather(settling, return_exceptions=True)
    assert settling.cancelled() and work.cancelled()


async def test_a_wait_between_two_pieces_of_work_ends_when_the_drain_begins() -> None:
    drain = Drain()
    waiting = asyncio.create_task(drain.until_begun(asyncio.Event().wait()))
    await asyncio.sleep(0)
    assert not waiting.done()
    drain.begin()
    assert await waiting is None
    assert await drain.until_begun(asyncio.sleep(0, result="free slot")) is None  # begun


async def test_a_wait_that_ends_first_gives_its_result() -> None:
    drain = Drain()
    assert await drain.until_begun(asyncio.sleep(0, result="free slot")) == "free slot"
    assert await drain.until_begun(asyncio.Event().wait(), limit_sec=0.01) is None
    assert not drain.begun and drain.remaining() == drain.timeout_sec
