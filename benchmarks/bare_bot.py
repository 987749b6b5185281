"""The baseline for `bench quick`: aiogram + openai and nothing else (no storage, no strategy)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiogram import Bot, Dispatcher, F
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.types import Message
from openai import AsyncOpenAI

from tests.fakes.bot_harness import TEST_TOKEN
from tests.fakes.telegram_server import FakeTelegramServer


@asynccontextmanager
async def running_bare_bot(telegram: FakeTelegramServer, llm_base_url: str) -> AsyncIterator[None]:
    client = AsyncOpenAI(base_url=llm_base_url, api_key="bench", max_retries=0)
    bot = Bot(
        token=TEST_TOKEN,
        session=AiohttpSession(api=TelegramAPIServer.from_base(telegram.base_url)),
    )
    dp = Dispatcher()

    @dp.message(F.text)
    async def answer(message: Message) -> None:
        completion = await client.chat.completions.create(
            model="bench", messages=[{"role": "user", "content": message.text or ""}]
        )
        await message.answer(completion.choices[0].message.content or "")

    polls_before = len(telegram.calls_of("getUpdates"))
    task = asyncio.create_task(dp.start_polling(bot, polling_timeout=1, handle_signals=False))
    try:
        await telegram.wait_for(lambda: len(telegram.calls_of("getUpdates")) > polls_before)
        yield
    finally:
        await dp.stop_polling()
        await task
        await client.close()
