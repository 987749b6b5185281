"""The real whytree bot polling a fake Telegram server: for tests and benchmarks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from aiogram import Bot

from bot.api_wiring import ApiServer, api_server
from bot.app import Runtime, build_bot, build_dispatcher, open_runtime
from bot.config import Settings
from storage.pool import QueryObserver
from tests.fakes.telegram_server import FakeTelegramServer

TEST_TOKEN = "123456:TEST-token-abcdefghijklmnopqrstuvwxyz"


def harness_settings(
    *, database_url: str, telegram: FakeTelegramServer, llm_base_url: str | None, **extra: Any
) -> Settings:
    """Settings for a test bot: nothing read from `.env`, nothing leaking from the environment."""
    values: dict[str, Any] = {
        "telegram_bot_token": TEST_TOKEN,
        "telegram_api_url": telegram.base_url,
        "telegram_polling_timeout_sec": 1,
        "database_url": database_url,
        "openai_api_key": "test-key" if llm_base_url else None,
        "openai_base_url": llm_base_url,
        "llm_model": "fake-model",
        "llm_timeout_sec": 5,
        "llm_max_retries": 1,
        "admin_ids": [],
        # Most tests read the reply's one message; streaming has its own tests.
        "stream_replies": False,
    }
    values.update(extra)
    return Settings(_env_file=None, **values)


def quick_path_settings(**kwargs: Any) -> Settings:
    """Settings with the strategy layer off (STRATEGY_ENABLED=false): every question is quick."""
    return harness_settings(strategy_enabled=False, **kwargs)


@dataclass
class RunningBot:
    runtime: Runtime
    telegram: FakeTelegramServer
    #: The HTTP API and alert receiver, when the settings have API_LISTEN.
    api: ApiServer | None = None


@asynccontextmanager
async def running_bot(
    settings: Settings, telegram: FakeTelegramServer, *, observe: QueryObserver | None = None
) -> AsyncIterator[RunningBot]:
    """Start polling (and the API on API_LISTEN); stop it (and close the bot session) on exit.
    `observe` sees every statement the bot sends to PostgreSQL."""
    async with open_runtime(settings, observe=observe) as runtime:
        bot = build_bot(settings)
        # The API stops first, while the bot's session (which polling closes) is still open.
        async with _polling(runtime, bot, telegram) as running, api_server(runtime, bot) as api:
            yield RunningBot(runtime=running.runtime, telegram=telegram, api=api)


@asynccontextmanager
async def _polling(
    runtime: Runtime, bot: Bot, telegram: FakeTelegramServer
) -> AsyncIterator[RunningBot]:
    settings = runtime.settings
    dp = build_dispatcher(runtime)
    polls_before = len(telegram.calls_of("getUpdates"))
    task = asyncio.create_task(
        dp.start_polling(
            bot,
            polling_timeout=settings.telegram_polling_timeout_sec,
            handle_signals=False,
            allowed_updates=dp.resolve_used_update_types(),
        )
    )
    try:
        await telegram.wait_for(
            lambda: len(telegram.calls_of("getUpdates")) > polls_before or task.done()
        )
        if task.done():
            await task  # start-up failed: raise its error here
        yield RunningBot(runtime=runtime, telegram=telegram)
    finally:
        if not task.done():
            await dp.stop_polling()
        await task
