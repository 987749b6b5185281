"""The real whytree bot polling a fake Telegram server: for tests and benchmarks."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

from benchmarks.harness import takeover
from bot.config import Settings, load_settings
from bot.telegram.inbox import InboxWorker
from bot.telegram.polling import poll_into_inbox
from bot.telegram.process import (
    build_bot,
    build_dispatcher,
    delivering_updates,
    serve_webhook,
    shares_webhook_server,
    telegram_api_server,
    webhook_app,
)
from bot.wiring.api import ApiServer
from bot.wiring.app import Runtime, open_runtime
from fake_servers.telegram.server import FakeTelegramServer
from storage.pool import QueryObserver

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
        # The suite runs three test processes on two cores: a demo query that takes
        # milliseconds alone has once taken over the operator's 5 s default there, and over
        # 30 s with stress-ng beside the suite (ten analyses at once). A guard against a
        # hang, not a speed: a test of the timeout sets its own.
        "tools_sql_timeout_ms": 120_000,
    }
    values.update(extra)
    return load_settings(env_file=None, **values)


def quick_path_settings(**kwargs: Any) -> Settings:
    """Settings with the strategy layer off (STRATEGY_ENABLED=false): every question is quick."""
    return harness_settings(strategy_enabled=False, **kwargs)


@dataclass
class RunningBot:
    runtime: Runtime
    telegram: FakeTelegramServer
    worker: InboxWorker
    #: The HTTP API and alert receiver, when the settings have API_LISTEN.
    api: ApiServer | None = None


@asynccontextmanager
async def running_bot(
    settings: Settings, telegram: FakeTelegramServer, *, observe: QueryObserver | None = None
) -> AsyncIterator[RunningBot]:
    """Poll into the inbox and answer from it, as `whytree run` does (and serve the API on
    API_LISTEN); stop on exit. `observe` sees every statement the bot sends to PostgreSQL."""
    async with open_runtime(settings, observe=observe) as runtime:
        bot = build_bot(settings.telegram)
        dp = build_dispatcher(runtime)
        polls_before = len(telegram.calls_of("getUpdates"))
        try:
            async with (
                delivering_updates(runtime, bot, dp, bot_id=bot.id) as worker,
                telegram_api_server(runtime, bot) as api,
            ):
                task = asyncio.create_task(
                    poll_into_inbox(
                        bot,
                        worker.receiving,
                        poll_sec=settings.telegram.polling_timeout_sec,
                        allowed_updates=dp.resolve_used_update_types(),
                        stored=worker.wake,
                    )
                )
                try:
                    await telegram.wait_for(
                        lambda: len(telegram.calls_of("getUpdates")) > polls_before or task.done()
                    )
                    if task.done():
                        await task  # start-up failed: raise its error here
                    with _registered(telegram, runtime):
                        yield RunningBot(
                            runtime=runtime, telegram=telegram, worker=worker, api=api
                        )
                finally:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
        finally:
            await bot.session.close()


@contextmanager
def _registered(telegram: FakeTelegramServer, runtime: Runtime) -> Iterator[None]:
    """The fake knows when this bot is idle (`FakeTelegramServer.wait_idle`): no update
    waits or runs and no deep analysis is queued or running."""

    async def idle() -> bool:
        open_ = await runtime.pool.fetchval(takeover.OPEN_WORK)
        return bool(open_ == 0)

    telegram.bot_idle = idle
    try:
        yield
    finally:
        if telegram.bot_idle is idle:
            telegram.bot_idle = None


def free_port() -> int:
    """A loopback port nobody listens on now (for a server whose URL must be known first)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def webhook_settings(**kwargs: Any) -> Settings:
    """`harness_settings` for webhook mode on a free loopback port, path /webhook."""
    port = free_port()
    return harness_settings(
        webhook_url=f"http://127.0.0.1:{port}/webhook",
        webhook_secret="test-secret_123",
        webhook_listen=f"127.0.0.1:{port}",
        **kwargs,
    )


@asynccontextmanager
async def running_webhook_bot(
    settings: Settings, telegram: FakeTelegramServer
) -> AsyncIterator[RunningBot]:
    """`whytree run --webhook` in this process: the server up and setWebhook done (and the
    API on API_LISTEN, on the webhook's server when the address is the same)."""
    async with open_runtime(settings) as runtime:
        bot = build_bot(settings.telegram)
        dp = build_dispatcher(runtime)
        calls_before = len(telegram.calls_of("setWebhook"))
        stack = AsyncExitStack()
        try:
            async with delivering_updates(runtime, bot, dp, bot_id=bot.id) as worker:
                app = webhook_app(runtime, bot, dp, worker)
                shared = app if shares_webhook_server(settings) else None
                api = await stack.enter_async_context(
                    telegram_api_server(runtime, bot, shared=shared)
                )
                task = asyncio.create_task(serve_webhook(runtime, bot, dp, app))
                try:
                    await telegram.wait_for(
                        lambda: (
                            any(c.ok for c in telegram.calls_of("setWebhook")[calls_before:])
                            or task.done()
                        )
                    )
                    if task.done():
                        await task
                    with _registered(telegram, runtime):
                        yield RunningBot(
                            runtime=runtime, telegram=telegram, worker=worker, api=api
                        )
                finally:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                    await stack.aclose()
        finally:
            await bot.session.close()
