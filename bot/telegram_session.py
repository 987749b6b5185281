"""Request middlewares of the bot's client session: Telegram's recoverable errors,
handled once for every API call instead of around each one.

- `RetryAfterMiddleware`: flood control (429, `TelegramRetryAfter`) -> wait
  `retry_after` seconds and retry, a bounded number of times.
- `PlainTextFallbackMiddleware`: "can't parse entities" on an HTML
  sendMessage / editMessageText -> send once more as plain text, tags stripped
  and entities unescaped, so the user still gets the words.
- `NotModifiedMiddleware`: "message is not modified" on an edit -> return
  `True`. Edits are declared to return ``Message | bool`` (Telegram itself
  answers ``True`` for inline messages), so callers already handle `True`;
  inventing a `Message` would mean guessing fields we do not know.

`install_request_middlewares` registers them outermost first: not-modified,
then the fallback, then retry-after, so the plain-text retry is itself
protected against 429 and an edit that falls back can still be "not modified".

aiogram annotates middlewares as returning ``Response[T]``, but the chain
actually passes the method's result (``T``) along; the casts below bridge that.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from enum import Enum
from typing import TYPE_CHECKING, Any, cast

from aiogram.client.default import Default
from aiogram.client.session.middlewares.base import (
    BaseRequestMiddleware,
    NextRequestMiddlewareType,
)
from aiogram.exceptions import TelegramBadRequest, TelegramRetryAfter
from aiogram.methods import (
    EditMessageCaption,
    EditMessageReplyMarkup,
    EditMessageText,
    SendMessage,
    TelegramMethod,
)
from aiogram.methods.base import TelegramType

if TYPE_CHECKING:
    from aiogram import Bot
    from aiogram.methods import Response

log = logging.getLogger(__name__)

_TAG_RE = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>")
_EDITS = (EditMessageText, EditMessageReplyMarkup, EditMessageCaption)


class RetryAfterMiddleware(BaseRequestMiddleware):
    """Honour Telegram's flood control: sleep `retry_after`, then try again."""

    def __init__(self, *, max_retries: int = 3, max_wait: float = 60.0) -> None:
        self.max_retries = max_retries
        self.max_wait = max_wait  # a longer ban is not worth blocking a handler for

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        for retry in range(1, self.max_retries + 1):
            try:
                return await make_request(bot, method)
            except TelegramRetryAfter as e:
                if e.retry_after > self.max_wait:
                    raise
                log.warning(
                    "Telegram flood control on %s: retry %d of %d in %ss",
                    method.__api_method__,
                    retry,
                    self.max_retries,
                    e.retry_after,
                )
                await asyncio.sleep(e.retry_after)
        return await make_request(bot, method)


class PlainTextFallbackMiddleware(BaseRequestMiddleware):
    """Resend HTML that Telegram cannot parse as plain text, once."""

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        try:
            return await make_request(bot, method)
        except TelegramBadRequest as e:
            if "can't parse entities" not in e.message or not _is_html(bot, method):
                raise
            log.warning(
                "Telegram rejected the HTML of %s (%s); sending plain text",
                method.__api_method__,
                e.message,
            )
            return await make_request(bot, _as_plain(method))


class NotModifiedMiddleware(BaseRequestMiddleware):
    """Treat an edit to the same content as done (returns `True`)."""

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        try:
            return await make_request(bot, method)
        except TelegramBadRequest as e:
            if "message is not modified" not in e.message or not isinstance(method, _EDITS):
                raise
            log.debug("%s: message is not modified; ignored", method.__api_method__)
            return cast("Response[TelegramType]", True)


def install_request_middlewares(bot: Bot) -> None:
    """Register the three middlewares on `bot.session` in the documented order."""
    bot.session.middleware(NotModifiedMiddleware())
    bot.session.middleware(PlainTextFallbackMiddleware())
    bot.session.middleware(RetryAfterMiddleware())


def strip_html(text: str) -> str:
    """What the user would have read: tags removed, entities decoded."""
    return html.unescape(_TAG_RE.sub("", text))


def _is_html(bot: Bot, method: TelegramMethod[Any]) -> bool:
    if not isinstance(method, SendMessage | EditMessageText):
        return False
    mode = method.parse_mode
    if isinstance(mode, Default):
        mode = bot.default[mode.name]
    if isinstance(mode, Enum):  # ParseMode.HTML
        mode = mode.value
    return str(mode or "").upper() == "HTML"


def _as_plain(method: TelegramMethod[TelegramType]) -> TelegramMethod[TelegramType]:
    text = strip_html(cast(SendMessage | EditMessageText, method).text or "")
    return method.model_copy(update={"text": text, "parse_mode": None, "entities": None})
