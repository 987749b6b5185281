"""`TelegramErrorCounter`: every failed Bot API call counted in ``telegram_errors_total``
by its kind (bot/operations/metrics.py owns the series)."""

from __future__ import annotations

from aiogram import Bot
from aiogram.client.session.middlewares.base import (
    BaseRequestMiddleware,
    NextRequestMiddlewareType,
)
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramBadRequest,
    TelegramConflictError,
    TelegramForbiddenError,
    TelegramNetworkError,
    TelegramNotFound,
    TelegramRetryAfter,
    TelegramServerError,
    TelegramUnauthorizedError,
)
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType

from bot.operations.metrics import Metrics

_TELEGRAM_KINDS: tuple[tuple[type[TelegramAPIError], str], ...] = (
    (TelegramRetryAfter, "retry_after"),
    (TelegramBadRequest, "bad_request"),
    (TelegramForbiddenError, "forbidden"),
    (TelegramUnauthorizedError, "unauthorized"),
    (TelegramNotFound, "not_found"),
    (TelegramConflictError, "conflict"),
    (TelegramServerError, "server_error"),
    (TelegramNetworkError, "network"),
)


def telegram_error_kind(error: TelegramAPIError) -> str:
    for cls, kind in _TELEGRAM_KINDS:
        if isinstance(error, cls):
            return kind
    return "other"


class TelegramErrorCounter(BaseRequestMiddleware):
    """Counts every failed Bot API call (innermost: each retry counts) and re-raises."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    async def install(self, bot: Bot) -> None:
        """A start-up hook: register on the bot's session, inside the other middlewares."""
        bot.session.middleware(self)

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        try:
            return await make_request(bot, method)
        except TelegramAPIError as e:
            self._metrics.telegram_errors.labels(telegram_error_kind(e)).inc()
            raise
