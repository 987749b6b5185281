"""Three real `whytree run --webhook` replicas behind a load balancer, one killed with
kill -9 in the middle of deep analyses: every report arrives once."""

from __future__ import annotations

import asyncio
import time

import pytest

from benchmarks.chaos import (
    DEEP_MARK,
    QUICK_ANSWER,
    chaos_llm_script,
    prepare_data,
    question,
)
from benchmarks.harness.bot_process import bot_env
from benchmarks.scale import start_replicas, stop_replicas
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer

pytestmark = pytest.mark.replicas


def _answers(telegram: FakeTelegramServer, chat: int) -> list[str]:
    texts = [m.text for m in telegram.sent_messages(chat)]
    return [t for t in texts if QUICK_ANSWER in t or DEEP_MARK in t]


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
            await telegram.wait_for(
                lambda: (
                    sum("Deep analysis started" in m.text for m in telegram.sent_messages()) >= 4
                ),
                timeout=30,
            )
            procs[0].kill()  # mid-analysis: whatever it held, another replica takes over
            killed = time.monotonic()
            await procs[0].wait_dead()
            await telegram.wait_for(lambda: all(_answers(telegram, c) for c in chats), timeout=60)
            recovered = time.monotonic() - killed
            await asyncio.sleep(3)  # a late duplicate would show up now
        finally:
            await stop_replicas(procs, balancer)
    assert all(len(_answers(telegram, c)) == 1 for c in chats), [
        _answers(telegram, c) for c in chats
    ]
    assert recovered < 30
    assert not telegram.calls_of("getUpdates")
