"""Webhook mode: the real bot serving Telegram's webhook calls into the inbox."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import asyncpg

from tests.fakes.bot_harness import running_webhook_bot, webhook_settings
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.telegram_server import FakeTelegramServer

ANSWER = "This is the fake model's answer."


async def _count(database_url: str, sql: str) -> int:
    conn = await asyncpg.connect(database_url)
    try:
        value: int = await conn.fetchval(sql)
        return value
    finally:
        await conn.close()


async def test_webhook_answers_and_refuses_forged_calls(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    settings = webhook_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        strategy_enabled=False,
    )
    assert settings.webhook_url is not None
    async with running_webhook_bot(settings, telegram):
        [hook] = telegram.calls_of("setWebhook")
        assert hook.params["url"] == settings.webhook_url
        assert hook.params["secret_token"] == "test-secret_123"
        forged: dict[str, Any] = {
            "update_id": 5,
            "message": {"message_id": 1, "date": 1, "chat": {"id": 1, "type": "private"},
                        "text": "forged"},
        }  # fmt: skip
        async with aiohttp.ClientSession() as http:
            for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}):
                async with http.post(settings.webhook_url, json=forged, headers=headers) as r:
                    assert r.status == 401
            async with http.get(settings.webhook_url.replace("/webhook", "/healthz")) as r:
                assert r.status == 200
        telegram.push_message(
            21, "what is a hypothesis tree?"
        )  # the fake POSTs it, with the secret
        await telegram.wait_for(
            lambda: any(ANSWER in m.text for m in telegram.sent_messages(21)), timeout=15
        )
        await asyncio.sleep(0.3)
    assert await _count(database_url, "SELECT count(*) FROM inbox_updates") == 1
    assert (
        await _count(database_url, "SELECT count(*) FROM inbox_updates WHERE update_id = 5") == 0
    )
    assert not telegram.sent_messages(1)
    assert len([m for m in telegram.sent_messages(21) if ANSWER in m.text]) == 1
    assert not telegram.calls_of("getUpdates")  # no long polling in webhook mode
