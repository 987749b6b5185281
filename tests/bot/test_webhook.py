"""Webhook mode: the real bot serving Telegram's webhook calls into the inbox."""

from __future__ import annotations

from typing import Any

import aiohttp
import asyncpg
import pytest

from benchmarks.harness.polling_bot import running_webhook_bot, webhook_settings
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from reasoning_core.errors import ConfigurationError
from tests.bot.settled import inbox_settled

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
    assert settings.telegram.webhook_url is not None
    async with running_webhook_bot(settings, telegram):
        [hook] = telegram.calls_of("setWebhook")
        assert hook.params["url"] == settings.telegram.webhook_url
        assert hook.params["secret_token"] == "test-secret_123"
        forged: dict[str, Any] = {
            "update_id": 5,
            "message": {"message_id": 1, "date": 1, "chat": {"id": 1, "type": "private"},
                        "text": "forged"},
        }  # fmt: skip
        async with aiohttp.ClientSession() as http:
            for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}):
                async with http.post(
                    settings.telegram.webhook_url, json=forged, headers=headers
                ) as r:
                    assert r.status == 401
            async with http.get(
                settings.telegram.webhook_url.replace("/webhook", "/healthz")
            ) as r:
                assert r.status == 200
        telegram.push_message(
            21, "what is a hypothesis tree?"
        )  # the fake POSTs it, with the secret
        await telegram.wait_for(
            lambda: any(ANSWER in m.text for m in telegram.sent_messages(21)), timeout=15
        )
        await inbox_settled(database_url)
    assert await _count(database_url, "SELECT count(*) FROM inbox_updates") == 1
    assert (
        await _count(database_url, "SELECT count(*) FROM inbox_updates WHERE update_id = 5") == 0
    )
    assert not telegram.sent_messages(1)
    assert len([m for m in telegram.sent_messages(21) if ANSWER in m.text]) == 1
    assert not telegram.calls_of("getUpdates")  # no long polling in webhook mode


async def test_a_webhook_telegram_keeps_refusing_stops_start_up_with_one_line(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    telegram.fail_next(
        "setWebhook", 400, description="Bad Request: bad webhook: IP address is reserved"
    )
    settings = webhook_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    with pytest.raises(ConfigurationError) as refused:
        async with running_webhook_bot(settings, telegram):
            pass
    message = str(refused.value)
    assert message.startswith("Telegram refused setWebhook for WEBHOOK_URL http://127.0.0.1:")
    assert "IP address is reserved" in message and "\n" not in message
    assert "test-secret_123" not in message


async def test_start_up_rides_out_transient_telegram_errors(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    telegram.fail_next("setMyCommands", 502, raw_body="<html>502 Bad Gateway</html>")
    telegram.fail_next("setWebhook", 500)
    telegram.fail_next("setWebhook", 429, retry_after=1)
    settings = webhook_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        strategy_enabled=False,
    )
    async with running_webhook_bot(settings, telegram):
        telegram.push_message(22, "what is DNS?")
        await telegram.wait_for(
            lambda: any(ANSWER in m.text for m in telegram.sent_messages(22)), timeout=15
        )
    assert [c.status for c in telegram.calls_of("setWebhook")] == [500, 429, 200]
    assert [c.status for c in telegram.calls_of("setMyCommands")][:2] == [502, 200]


async def test_api_shares_the_webhook_server_when_api_listen_is_the_same(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    settings = webhook_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        strategy_enabled=False,
    )
    api = settings.api.model_copy(update={"listen": settings.telegram.webhook_listen})
    settings = settings.model_copy(update={"api": api})
    assert settings.telegram.webhook_url is not None
    base = settings.telegram.webhook_url.removesuffix("/webhook")
    async with running_webhook_bot(settings, telegram) as running:
        assert running.api is not None
        assert running.api.url == base
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/v1/openapi.json") as r:
                assert r.status == 200
                assert "/v1/ask" in (await r.json())["paths"]
            async with http.post(f"{base}/v1/ask", json={"question": "hi"}) as r:
                assert r.status == 401  # no API key
            async with http.post(f"{base}/alerts/alertmanager", json={}) as r:
                assert r.status == 401  # no credentials
        telegram.push_message(22, "what is a hypothesis tree?")  # the webhook still answers
        await telegram.wait_for(
            lambda: any(ANSWER in m.text for m in telegram.sent_messages(22)), timeout=15
        )
