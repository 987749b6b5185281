"""The composition root: settings in, a wired service, dispatcher and bot out.

This is the only module of `bot` that imports `storage` and the LLM adapter.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import asyncpg
from aiogram import Bot, Dispatcher
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode

from bot.config import TELEGRAM_DEFAULT_API, Settings
from bot.handlers import common, errors, fallback, questions
from bot.middlewares import OneQuestionPerChatMiddleware, UserMiddleware
from bot.telegram_session import install_request_middlewares
from reasoning_core.errors import ConfigurationError
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.service import Deps, ReasoningService
from storage.embedded import EmbeddedPostgres
from storage.exchanges import PgExchangeStore
from storage.migrate import apply_migrations
from storage.pool import create_pool
from storage.sessions import PgSessionStore
from storage.users import PgUserStore

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Runtime:
    """Everything a front end needs, opened together and closed together."""

    settings: Settings
    pool: asyncpg.Pool[Any]
    service: ReasoningService
    users: PgUserStore


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Database (embedded unless DATABASE_URL is set), migrations, stores, LLM, service."""
    embedded: EmbeddedPostgres | None = None
    if settings.database_url is not None:
        dsn = settings.database_url.get_secret_value()
    else:
        embedded = EmbeddedPostgres(settings.whytree_data_dir)
        dsn = await asyncio.to_thread(embedded.start)
    chat_model = build_chat_model(settings)
    try:
        pool = await create_pool(dsn, max_size=settings.db_pool_max_size)
        try:
            async with pool.acquire() as conn:
                await apply_migrations(conn)
            yield _wire(settings, pool, chat_model)
        finally:
            await pool.close()
    finally:
        if chat_model is not None:
            await chat_model.aclose()
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)


def _wire(
    settings: Settings, pool: asyncpg.Pool[Any], chat_model: OpenAIChatModel | None
) -> Runtime:
    deps = Deps(
        chat_model=chat_model,
        sessions=PgSessionStore(pool),
        exchanges=PgExchangeStore(pool),
    )
    return Runtime(
        settings=settings, pool=pool, service=ReasoningService(deps), users=PgUserStore(pool)
    )


def build_chat_model(settings: Settings) -> OpenAIChatModel | None:
    """The OpenAI-compatible model, or None when no LLM is configured."""
    if not settings.llm_configured:
        return None
    return OpenAIChatModel(
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
        model=settings.llm_model,
        timeout=settings.llm_timeout_sec,
        max_retries=settings.llm_max_retries,
    )


def build_bot(settings: Settings) -> Bot:
    if settings.telegram_bot_token is None:
        raise ConfigurationError("TELEGRAM_BOT_TOKEN is not set")
    session = AiohttpSession()
    if settings.telegram_api_url != TELEGRAM_DEFAULT_API:
        session = AiohttpSession(api=TelegramAPIServer.from_base(settings.telegram_api_url))
    bot = Bot(
        token=settings.telegram_bot_token.get_secret_value(),
        session=session,
        default=DefaultBotProperties(parse_mode=ParseMode.HTML),
    )
    install_request_middlewares(bot)
    return bot


def build_dispatcher(runtime: Runtime) -> Dispatcher:
    dp = Dispatcher(service=runtime.service, users=runtime.users)
    user_middleware = UserMiddleware(runtime.users)
    dp.message.outer_middleware(user_middleware)
    dp.edited_message.outer_middleware(user_middleware)
    dp.callback_query.outer_middleware(user_middleware)
    dp.message.middleware(OneQuestionPerChatMiddleware())
    dp.include_routers(
        errors.create_router(),
        common.create_router(),
        questions.create_router(),
        fallback.create_router(),
    )
    dp.startup.register(_on_startup)
    return dp


async def _on_startup(bot: Bot) -> None:
    await bot.set_my_commands(common.COMMANDS)
    me = await bot.me()
    log.info("bot @%s is polling", me.username)


async def run_bot(settings: Settings) -> None:
    """Long-poll Telegram until interrupted."""
    bot = build_bot(settings)
    async with open_runtime(settings) as runtime:
        dp = build_dispatcher(runtime)
        await dp.start_polling(
            bot,
            polling_timeout=settings.telegram_polling_timeout_sec,
            allowed_updates=dp.resolve_used_update_types(),
        )
