"""The baseline for `bench quick`: aiogram + openai and nothing else (no storage, no strategy).

Like the popular Telegram LLM bots it streams: the first words go out as a message,
which is edited at most once a second and once more with the final text.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiogram import Bot, Dispatcher, F
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.types import Message
from openai import AsyncOpenAI

from benchmarks.harness.polling_bot import TEST_TOKEN
from bot.telegram.replies.streaming import EDIT_INTERVAL
from fake_servers.telegram.server import FakeTelegramServer


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
        chunks = await client.chat.completions.create(
            model="bench", messages=[{"role": "user", "content": message.text or ""}], stream=True
        )
        text, shown, last = "", "", 0.0
        sent: Message | None = None
        async for chunk in chunks:
            if not chunk.choices or not chunk.choices[0].delta.content:
                continue
            text += chunk.choices[0].delta.content
            if sent is None:
                sent, shown, last = await message.answer(text), text, time.monotonic()
            elif time.monotonic() - last >= EDIT_INTERVAL:
                await sent.edit_text(text)
                shown, last = text, time.monotonic()
        if sent is None:
            await message.answer(text or "…")
        elif text != shown:
            await sent.edit_text(text)

    polls_before = len(telegram.calls_of("getUpdates"))
    task = asyncio.create_task(dp.start_polling(bot, polling_timeout=1, handle_signals=False))
    try:
        await telegram.wait_for(lambda: len(telegram.calls_of("getUpdates")) > polls_before)
        yield
    finally:
        await dp.stop_polling()
        await task
        await client.close()
