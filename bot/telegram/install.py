"""`install_ops`: access control, rate limits, metrics hooks and the `ops` workflow data,
added to a dispatcher in one call by the composition root."""

from __future__ import annotations

from aiogram import Dispatcher

from bot.operations.ops import Ops
from bot.telegram.metrics import TelegramErrorCounter
from bot.telegram.middlewares.access import AccessMiddleware
from bot.telegram.middlewares.rate_limit import RateLimitMiddleware


def install_ops(dp: Dispatcher, ops: Ops) -> None:
    """Call after the user and one-question middlewares are registered.

    Outer (every update): access control, which also sets the log context and the
    usage owner. Inner (questions only): rate limit and daily token budget. On
    start-up: Telegram API errors are counted on the bot's session.
    """
    dp["ops"] = ops
    access = AccessMiddleware(ops.access_policy(), usage=ops.usage)
    dp.message.outer_middleware(access)
    dp.edited_message.outer_middleware(access)
    dp.callback_query.outer_middleware(access)
    dp.message.middleware(
        RateLimitMiddleware(
            window=ops.window, usage=ops.usage, daily_token_budget=ops.daily_token_budget
        )
    )
    dp.startup.register(TelegramErrorCounter(ops.metrics).install)
