"""Waiting until the bot is done with what it was sent, instead of sleeping a fixed time.

A test that asserts "nothing else was sent" must first know that nothing else can be:
every stored update has its outcome and no deep analysis waits or runs. Under a busy
machine a fixed sleep was sometimes shorter than that (issue 51); this wait is not.
"""

from __future__ import annotations

import asyncio

from benchmarks.harness import takeover

#: A hang guard, not a time the test expects: a busy machine is slower, not wrong.
LIMIT_SEC = 120.0


async def inbox_settled(database_url: str, *, stored: int = 1) -> None:
    """Until at least `stored` updates are in the inbox and every update has its outcome."""
    async with takeover.connected(database_url) as conn:
        for _ in range(int(LIMIT_SEC * 10)):
            count = await conn.fetchval("SELECT count(*) FROM inbox_updates")
            if count >= stored and await takeover.finished(conn):
                return
            await asyncio.sleep(0.1)
    raise AssertionError(f"the inbox never settled with {stored} update(s) finished")
