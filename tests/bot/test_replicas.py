"""Real `whytree run` processes: start-up through Telegram's transient errors, a clear
line when Telegram keeps refusing, and three webhook replicas with one killed."""

from __future__ import annotations

import asyncio
import time

from benchmarks.chaos import (
    DEEP_MARK,
    QUICK_ANSWER,
    chaos_llm_script,
    prepare_data,
    question,
)
from benchmarks.scale import start_replicas, stop_replicas
from tests.fakes.bot_process import BotProcess, bot_env
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.telegram_server import FakeTelegramServer


def _answers(telegram: FakeTelegramServer, chat: int) -> list[str]:
    texts = [m.text for m in telegram.sent_messages(chat)]
    return [t for t in texts if QUICK_ANSWER in t or DEEP_MARK in t]


async def test_start_up_rides_out_telegram_5xx(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    telegram.fail_next("getMe", 500)
    telegram.fail_next("setMyCommands", 502, raw_body="<html>502 Bad Gateway</html>")
    telegram.fail_next("sendMessage", 500)
    env = bot_env(
        database_url=database_url,
        telegram_url=telegram.base_url,
        llm_url=llm.base_url,
        STRATEGY_ENABLED="false",
    )
    proc = BotProcess(env, name="startup")
    await proc.start()
    try:
        telegram.push_message(31, "what is DNS?")
        await telegram.wait_for(lambda: bool(_answers(telegram, 31)), timeout=60)
        assert proc.alive
    finally:
        await proc.stop()
    assert len(_answers(telegram, 31)) == 1
    assert [c.status for c in telegram.calls_of("getMe")][:2] == [500, 200]
    assert "Traceback" not in proc.stderr()


async def test_a_webhook_telegram_keeps_refusing_stops_start_up_with_one_line(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    telegram.fail_next(
        "setWebhook", 400, description="Bad Request: bad webhook: IP address is reserved"
    )
    env = bot_env(
        database_url=database_url,
        telegram_url=telegram.base_url,
        llm_url=None,
        WEBHOOK_URL="http://127.0.0.1:9/webhook",
        WEBHOOK_SECRET="s3cret",
    )
    proc = BotProcess(env, webhook=True, name="refused")
    await proc.start()
    assert await asyncio.wait_for(proc.wait_dead(), 60) == 2
    stderr = proc.stderr()
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("whytree: Telegram refused setWebhook for WEBHOOK_URL"), stderr[-2000:]
    assert "IP address is reserved" in last and "s3cret" not in stderr


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
