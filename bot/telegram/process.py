"""The Telegram process: the bot and its dispatcher built on a runtime, updates received
(long polling or the webhook) into the inbox and answered, until the drain.

The composition root (bot/wiring/app.py) opens the runtime; this module runs Telegram
on it: `run_bot` for `whytree run`, and the parts the harness and the tests start one
by one (`build_bot`, `build_dispatcher`, `delivering_updates`, `webhook_app`,
`serve_webhook`, `telegram_api_server`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

from aiogram import Bot, Dispatcher
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.exceptions import ClientDecodeError, TelegramAPIError
from aiohttp import web

from bot.alerts import ALERT_USER_ID
from bot.config import TELEGRAM_DEFAULT_API, Settings, TelegramSettings
from bot.delivery.drain import stopped_by_signals
from bot.delivery.janitor import Janitor, RetentionPolicy
from bot.delivery.limits import LeasedChatLocks
from bot.http_api import API_CHAT_BASE
from bot.operations.http_server import parse_listen, serve
from bot.operations.server import ops_server
from bot.telegram.alerts.poster import AlertPoster
from bot.telegram.handlers import (
    admin,
    alerts,
    clarify,
    common,
    errors,
    fallback,
    memory,
    questions,
    trees,
)
from bot.telegram.inbox import InboxWorker, process_name
from bot.telegram.install import install_ops
from bot.telegram.middlewares import (
    NormalisedTextMiddleware,
    OneQuestionPerChatMiddleware,
    UserMiddleware,
)
from bot.telegram.middlewares.i18n import LanguageMiddleware, catalogues
from bot.telegram.outbox import install_outbox
from bot.telegram.polling import poll_into_inbox
from bot.telegram.replies.report_chart import ReportCharts
from bot.telegram.replies.sending import send_answer
from bot.telegram.session import install_request_middlewares
from bot.telegram.webhook import build_webhook_app, webhook_path
from bot.trees.page import TreeLinks
from bot.trees.picture import TreePictures
from bot.wiring.alert_actions import alert_actions
from bot.wiring.api import ApiServer, api_server
from bot.wiring.app import Runtime, open_runtime
from reasoning_core import Answer, ConfigurationError, Job, ReasoningService

log = logging.getLogger(__name__)


def build_bot(telegram: TelegramSettings) -> Bot:
    if telegram.bot_token is None:
        raise ConfigurationError("TELEGRAM_BOT_TOKEN is not set")
    session = AiohttpSession()
    if telegram.api_url != TELEGRAM_DEFAULT_API:
        session = AiohttpSession(api=TelegramAPIServer.from_base(telegram.api_url))
    bot = Bot(
        token=telegram.bot_token.get_secret_value(),
        session=session,
        default=DefaultBotProperties(parse_mode=ParseMode.HTML),
    )
    install_request_middlewares(bot, send_deadline_sec=telegram.send_deadline_sec)
    return bot


def report_charts(runtime: Runtime) -> ReportCharts:
    """The runtime's chart drawing, sent as Telegram photos after the reports."""
    return ReportCharts(charts=runtime.charts, trees=runtime.ops.trees)


def build_dispatcher(runtime: Runtime) -> Dispatcher:
    delivery = runtime.settings.delivery
    dp = Dispatcher(
        service=runtime.service,
        users=runtime.users,
        chat_locks=LeasedChatLocks(runtime.leases, ttl_sec=delivery.inbox_lease_sec),
        max_reply_messages=delivery.max_reply_messages,
        stream_replies=delivery.stream_replies,
        background=set(),  # tasks started at start-up, kept referenced until done
        pictures=runtime.pictures,
        tree_links=runtime.ops.links,
        report_charts=report_charts(runtime),
    )
    normalised = NormalisedTextMiddleware()  # first: everything after sees clean text
    dp.message.outer_middleware(normalised)
    dp.edited_message.outer_middleware(normalised)
    user_middleware = UserMiddleware(runtime.users)
    dp.message.outer_middleware(user_middleware)
    dp.edited_message.outer_middleware(user_middleware)
    dp.callback_query.outer_middleware(user_middleware)
    language = LanguageMiddleware(catalogues())  # before access: refusals speak it too
    for observer in (dp.message, dp.edited_message, dp.callback_query):
        observer.outer_middleware(language)
    dp.message.middleware(OneQuestionPerChatMiddleware(dp["chat_locks"]))
    install_ops(dp, runtime.ops)
    dp.include_routers(
        errors.create_router(),
        common.create_router(),
        clarify.create_router(),
        trees.create_router(),
        memory.create_router(memories=runtime.memories, projects=runtime.projects),
        alerts.create_router(alert_actions(runtime)),
        questions.create_router(),
        admin.create_router(runtime.ops.audit),
        fallback.create_router(),
        clarify.create_fallback_router(),
    )
    dp.startup.register(_on_startup)
    return dp


async def _on_startup(bot: Bot, *, pictures: TreePictures) -> None:
    """The command menus: a courtesy, so a Telegram that keeps refusing them is one log
    line, not a failed start (transient errors are retried by the session first)."""
    try:
        async with asyncio.timeout(STARTUP_LIMIT_SEC):
            await bot.set_my_commands(common.COMMANDS)
            await bot.set_my_commands(common.RUSSIAN_COMMANDS, language_code="ru")
    except (TelegramAPIError, ClientDecodeError, TimeoutError) as e:
        log.error("could not set the bot's command menu (the bot runs without it): %s", e)
    if not pictures.available:
        log.warning("Graphviz (dot) is not installed: reasoning trees are sent as text")


#: How long start-up keeps retrying Telegram (setWebhook, the command menus).
STARTUP_LIMIT_SEC = 60.0


async def _resume_deep_jobs(
    bot: Bot,
    service: ReasoningService,
    links: TreeLinks,
    *,
    max_messages: int,
    charts: ReportCharts | None = None,
) -> None:
    """Unkeyed analyses (not started by an update) a dead process left running."""

    async def deliver(job: Job, answer: Answer) -> None:
        if job.user_id == ALERT_USER_ID or job.chat_id >= API_CHAT_BASE:
            # An alert's analysis is claimed again and posted by the alert workers; an API
            # job's client is gone with the process that ran it.
            log.info("deep-analysis job %s finished; not a Telegram question", job.id)
            return
        await send_answer(
            bot, job.chat_id, answer, links=links, max_messages=max_messages, charts=charts
        )

    resumed = await service.resume_deep_jobs(deliver)
    if resumed:
        log.info("resumed %d deep analyses left running by a dead process", resumed)


@asynccontextmanager
async def delivering_updates(
    runtime: Runtime, bot: Bot, dp: Dispatcher, *, bot_id: int
) -> AsyncIterator[InboxWorker]:
    """Replies through the outbox, the dispatcher's start-up hooks, the inbox worker
    running (claiming, answering, taking over what dead processes left) and the retention
    janitor, until exit; the exit drains: what the worker holds finishes, until the
    drain's deadline, or is handed back. `bot_id`: the bot's id as getMe gives it; its
    inbox holds its own updates only, and updates stored before they were kept per bot
    become its own."""
    delivery = runtime.settings.delivery
    inbox = runtime.inbox_for(bot_id)
    if adopted := await inbox.adopt_legacy():
        log.info(
            "%d updates stored before updates were kept per bot are bot %s's", adopted, bot_id
        )
    install_outbox(bot, runtime.outbox)
    worker = InboxWorker(
        inbox=inbox,
        leases=runtime.leases,
        dispatcher=dp,
        bot=bot,
        lease_sec=delivery.inbox_lease_sec,
        concurrency=delivery.inbox_concurrency,
        max_attempts=delivery.inbox_max_attempts,
        on_idle=partial(
            _resume_deep_jobs,
            bot,
            runtime.service,
            runtime.ops.links,
            max_messages=delivery.max_reply_messages,
            charts=report_charts(runtime),
        ),
        drain=runtime.drain,
    )
    janitor = Janitor(
        retention=runtime.retention,
        leases=runtime.leases,
        policy=retention_policy(delivery.inbox_retention_hours),
        owner=process_name(),
    )
    workflow = {"dispatcher": dp, "bots": [bot], **dp.workflow_data}
    await dp.emit_startup(bot=bot, **workflow)
    working = asyncio.create_task(worker.run())
    tasks = [working, asyncio.create_task(janitor.run())]
    try:
        yield worker
        runtime.drain.begin()  # the worker finishes what it holds, until the drain's deadline
        await asyncio.wait([working])
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await dp.emit_shutdown(bot=bot, **workflow)


def retention_policy(hours: float) -> RetentionPolicy:
    """INBOX_RETENTION_HOURS as the janitor's policy: a run every 5 minutes (or a twelfth
    of the horizon, when that is shorter)."""
    horizon = hours * 3600
    return RetentionPolicy(horizon_sec=horizon, every_sec=min(300.0, horizon / 12))


def webhook_app(
    runtime: Runtime, bot: Bot, dp: Dispatcher, worker: InboxWorker
) -> web.Application:
    """Telegram's webhook application (more routes may be added before it is served)."""
    url, secret = _webhook_settings(runtime.settings.telegram)
    return build_webhook_app(
        dispatcher=dp,
        bot=bot,
        inbox=worker.receiving,
        secret_token=secret,
        path=webhook_path(url),
        stored=worker.wake,
    )


async def serve_webhook(runtime: Runtime, bot: Bot, dp: Dispatcher, app: web.Application) -> None:
    """Serve the webhook app on WEBHOOK_LISTEN and setWebhook to WEBHOOK_URL; runs until
    the drain begins (or it is cancelled). Updates that come while the process drains are
    still stored, for the other replicas: only this one's worker stops taking them."""
    settings = runtime.settings
    url, secret = _webhook_settings(settings.telegram)
    host, port = settings.telegram.webhook_address
    async with serve(app, host=host, port=port):
        try:
            async with asyncio.timeout(STARTUP_LIMIT_SEC):
                await bot.set_webhook(
                    url,
                    secret_token=secret,
                    allowed_updates=dp.resolve_used_update_types(),
                )
        except (TelegramAPIError, ClientDecodeError, TimeoutError) as e:
            why = e.message if isinstance(e, TelegramAPIError) else type(e).__name__
            raise ConfigurationError(
                f"Telegram refused setWebhook for WEBHOOK_URL {url}: {why}"
            ) from e
        log.info("bot is receiving updates on %s", url)
        await runtime.drain.wait()


async def run_bot(settings: Settings, *, bot_id: int, webhook: bool = False) -> None:
    """Receive updates until SIGTERM or SIGINT: long polling, or the webhook (for replicas);
    the API and alert receiver on API_LISTEN (on the webhook's server when the address is
    the same). The first signal drains (bot/delivery/drain.py), the second stops at once.
    `bot_id`: the id getMe gave at start-up."""
    bot = build_bot(settings.telegram)
    try:
        async with open_runtime(settings) as runtime:
            dp = build_dispatcher(runtime)
            with stopped_by_signals(runtime.drain):
                await _receive(runtime, bot, dp, bot_id=bot_id, webhook=webhook)
        log.info("stopped: the work in flight was finished or handed back")
    finally:
        await bot.session.close()


async def _receive(
    runtime: Runtime, bot: Bot, dp: Dispatcher, *, bot_id: int, webhook: bool
) -> None:
    settings = runtime.settings
    async with (
        ops_server(
            runtime.ops,
            host=settings.observability.metrics_host,
            port=settings.observability.metrics_port,
            pages=runtime.pages,
        ),
        delivering_updates(runtime, bot, dp, bot_id=bot_id) as worker,
    ):
        app = webhook_app(runtime, bot, dp, worker) if webhook else None
        shared = app if app is not None and shares_webhook_server(settings) else None
        async with telegram_api_server(runtime, bot, shared=shared):
            if app is not None:
                await serve_webhook(runtime, bot, dp, app)
            else:
                log.info("bot is polling")
                await poll_into_inbox(
                    bot,
                    worker.receiving,
                    poll_sec=settings.telegram.polling_timeout_sec,
                    allowed_updates=dp.resolve_used_update_types(),
                    stored=worker.wake,
                    drain=runtime.drain,
                )


def shares_webhook_server(settings: Settings) -> bool:
    """Is API_LISTEN the webhook's own address (one server for both)?"""
    return (
        settings.api.listen is not None
        and parse_listen(settings.api.listen) == settings.telegram.webhook_address
    )


def _webhook_settings(telegram: TelegramSettings) -> tuple[str, str]:
    """WEBHOOK_URL and WEBHOOK_SECRET, which webhook mode needs."""
    if telegram.webhook_url is None or telegram.webhook_secret is None:
        raise ConfigurationError(
            "webhook mode needs WEBHOOK_URL (the public https URL Telegram calls) and "
            "WEBHOOK_SECRET (letters, digits, _ and -)"
        )
    return telegram.webhook_url, telegram.webhook_secret.get_secret_value()


@asynccontextmanager
async def telegram_api_server(
    runtime: Runtime, bot: Bot, *, shared: web.Application | None = None
) -> AsyncIterator[ApiServer | None]:
    """bot/wiring/api.py's server, with alert reports posted to Telegram by `bot`."""
    delivery = runtime.settings.delivery
    poster = AlertPoster(
        bot,
        links=runtime.ops.links,
        max_messages=delivery.max_reply_messages,
        charts=report_charts(runtime),
    )
    async with api_server(runtime, poster, shared=shared) as server:
        yield server
