"""Three real `whytree run --webhook` replicas behind a load balancer, one killed with
kill -9 in the middle of deep analyses: every report arrives once, what the dead replica
held taken over by the others once its lease ran out (no stopwatch: a busy machine is
slower, not wrong)."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from benchmarks.chaos import (
    DEEP_MARK,
    QUICK_ANSWER,
    chaos_llm_script,
    prepare_data,
    question,
)
from benchmarks.harness import takeover
from benchmarks.harness.bot_process import bot_env
from benchmarks.scale import start_replicas, stop_replicas
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer

pytestmark = pytest.mark.replicas


def _answers(telegram: FakeTelegramServer, chat: int) -> list[str]:
    texts = [m.text for m in telegram.sent_messages(chat)]
    return [t for t in texts if QUICK_ANSWER in t or DEEP_MARK in t]


async def _holding(conn: asyncpg.Connection[Any], owner: str) -> None:
    """Until `owner` holds an update (a deep analysis under way); 60 s at most."""
    for _ in range(1200):
        if await takeover.holding(conn, owner):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{owner} never held an update")


async def test_three_webhook_replicas_one_killed_mid_analysis(database_url: str) -> None:
    await prepare_data(database_url)
    async with (
        FakeTelegramServer() as telegram,
        FakeOpenAIServer(latency=0.3) as llm,
    ):
        llm.script(chaos_llm_script())
        env = bot_env(
            database_url=database_url,
            telegram_url=telegram.base_url,
            llm_url=llm.base_url,
            lease_sec=2.0,
            RATE_LIMIT_PER_MIN="0",
        )
        procs, balancer = await start_replicas(telegram, env, 3, name="replica")
        chats = list(range(41, 47))
        try:
            for chat in chats:
                telegram.push_message(chat, question("deep", chat))
            async with takeover.connected(database_url) as conn:
                await _holding(conn, procs[0].owner)
                procs[0].kill()  # mid-analysis: whatever it held, another replica takes over
                await procs[0].wait_dead()
                held = await takeover.held(conn, procs[0].owner)
                await telegram.wait_for(
                    lambda: all(_answers(telegram, c) for c in chats), timeout=120
                )
                # Every update has its outcome: no late duplicate can come any more.
                assert await takeover.until_finished(conn), "an update was never finished"
                taken = await takeover.taken_over(conn, held)
        finally:
            await stop_replicas(procs, balancer)
    assert all(len(_answers(telegram, c)) == 1 for c in chats), [
        _answers(telegram, c) for c in chats
    ]
    assert held and taken == held, (held, taken)  # every one, after the dead one's lease
    assert not telegram.calls_of("getUpdates")
