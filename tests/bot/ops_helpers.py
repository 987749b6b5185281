"""Helpers for the admin, access, rate-limit and metrics tests (through the fake Telegram)."""

from __future__ import annotations

from typing import Any

import asyncpg

from benchmarks.harness.polling_bot import harness_settings
from bot.config import Settings
from fake_servers.telegram.server import WAIT_SEC, FakeTelegramServer
from fake_servers.telegram.updates import ChatType

ADMIN = 7001
OTHER_ADMIN = 7003
USER = 7002
GROUP = -1007000
UNKNOWN_COMMAND = "I don't know that command. See /help for what I can do."


def ops_settings(
    database_url: str, telegram: FakeTelegramServer, llm_base_url: str | None, **extra: Any
) -> Settings:
    values: dict[str, Any] = {
        "admin_ids": [ADMIN, OTHER_ADMIN],
        "rate_limit_per_min": 0,
        "strategy_enabled": False,  # every question takes the quick path: one LLM call
    }
    values.update(extra)
    return harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm_base_url, **values
    )


async def say(
    telegram: FakeTelegramServer,
    chat_id: int,
    text: str,
    *,
    user_id: int | None = None,
    chat_type: ChatType = "private",
    timeout: float = WAIT_SEC,  # noqa: ASYNC109
) -> str:
    """Send a message and return the bot's reply (all parts, joined)."""
    before = len(telegram.sent_messages(chat_id))
    telegram.push_message(chat_id, text, user_id=user_id, chat_type=chat_type)
    await telegram.wait_for_messages(chat_id, before + 1, timeout=timeout)
    await telegram.wait_idle(timeout)  # a long reply may come in several parts
    return "\n".join(m.text for m in telegram.sent_messages(chat_id)[before:])


async def silence(
    telegram: FakeTelegramServer,
    chat_id: int,
    text: str,
    *,
    user_id: int | None = None,
    chat_type: ChatType = "private",
) -> None:
    """Send a message and check that the bot does not reply (waits for the update to be read)."""
    before = len(telegram.sent_messages(chat_id))
    update_id = telegram.push_message(chat_id, text, user_id=user_id, chat_type=chat_type)
    await telegram.wait_for(lambda: _confirmed(telegram, update_id))
    await telegram.wait_idle()  # stored, and done with: nothing else follows
    assert len(telegram.sent_messages(chat_id)) == before, telegram.dump()


def _confirmed(telegram: FakeTelegramServer, update_id: int) -> bool:
    """The bot asked for updates after this one: it has received it."""
    return any(
        int(c.params.get("offset") or 0) > update_id for c in telegram.calls_of("getUpdates")
    )


async def fetch(database_url: str, query: str, *args: Any) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetch(query, *args)
    finally:
        await conn.close()


async def execute(database_url: str, query: str, *args: Any) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(query, *args)
    finally:
        await conn.close()
