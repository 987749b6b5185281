"""Request middlewares of the bot's client session: Telegram's recoverable errors,
handled once for every API call instead of around each one.

- `TransientRetryMiddleware`: an error that will pass is retried — flood control
  (429) after its retry_after however long; 5xx, network errors and answers that are
  not Telegram's JSON (a proxy's 502 page) with exponential backoff and jitter — until
  the method's deadline: `deadline_sec` (TELEGRAM_SEND_DEADLINE_SEC) for replies and
  start-up calls, `courtesy_deadline_sec` for progress edits, chat actions and the
  like. getUpdates is left to the poller, which has its own backoff.
- `PlainTextFallbackMiddleware`: "can't parse entities" on an HTML
  sendMessage / editMessageText -> send once more as plain text, tags stripped
  and entities unescaped, so the user still gets the words.
- `NotModifiedMiddleware`: "message is not modified" on an edit -> return
  `True`. Edits are declared to return ``Message | bool`` (Telegram itself
  answers ``True`` for inline messages), so callers already handle `True`;
  inventing a `Message` would mean guessing fields we do not know.

- `KeepResponseTypesMiddleware`: holds the ``Response[T]`` class aiogram builds for
  each method's result type. pydantic caches parametrised generic models only weakly,
  so without a reference each API call built the class again — a full schema build,
  a fifth of the bot's CPU under load (`whytree bench quick`).

`install_request_middlewares` registers them outermost first: not-modified,
then the fallback, then the transient retry, so the plain-text retry is itself
protected against 429 and an edit that falls back can still be "not modified".

aiogram annotates middlewares as returning ``Response[T]``, but the chain
actually passes the method's result (``T``) along; the casts below bridge that.
"""

from __future__ import annotations

import html
import logging
import random
import re
from enum import Enum
from typing import TYPE_CHECKING, Any, cast

from aiogram.client.default import Default
from aiogram.client.session.middlewares.base import (
    BaseRequestMiddleware,
    NextRequestMiddlewareType,
)
from aiogram.exceptions import (
    ClientDecodeError,
    TelegramAPIError,
    TelegramBadRequest,
    TelegramEntityTooLarge,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
)
from aiogram.methods import (
    EditMessageCaption,
    EditMessageReplyMarkup,
    EditMessageText,
    GetUpdates,
    Response,
    SendMessage,
    TelegramMethod,
)
from aiogram.methods.base import TelegramType
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_before_delay

from bot.delivery.context import is_transient

if TYPE_CHECKING:
    from aiogram import Bot

log = logging.getLogger(__name__)

#: Methods whose failure only costs a courtesy (a progress edit, the typing action).
_COURTESY = frozenset(
    {"sendChatAction", "editMessageText", "editMessageReplyMarkup", "deleteMessage"}
)
_TAG_RE = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>")
_EDITS = (EditMessageText, EditMessageReplyMarkup, EditMessageCaption)


def is_transient_error(error: BaseException) -> bool:
    """Will trying again help? 429, 5xx, network trouble, a non-JSON answer."""
    if isinstance(error, TelegramEntityTooLarge):
        return False
    return isinstance(
        error, TelegramRetryAfter | TelegramServerError | TelegramNetworkError | ClientDecodeError
    )


def _backoff(state: RetryCallState, *, base: float, cap: float) -> float:
    error = state.outcome.exception() if state.outcome is not None else None
    if isinstance(error, TelegramRetryAfter):
        return float(error.retry_after)
    exponential = min(cap, base * 2 ** (state.attempt_number - 1))
    return random.uniform(exponential / 2, exponential)


def describe_error(error: BaseException) -> str:
    if isinstance(error, TelegramAPIError):
        return f"{type(error).__name__}: {error.message}"
    return type(error).__name__  # a ClientDecodeError carries the whole body: keep it out


class TransientRetryMiddleware(BaseRequestMiddleware):
    def __init__(
        self,
        *,
        deadline_sec: float = 600.0,
        courtesy_deadline_sec: float = 30.0,
        base_sec: float = 0.5,
        cap_sec: float = 15.0,
    ) -> None:
        self.deadline_sec = deadline_sec
        self.courtesy_deadline_sec = courtesy_deadline_sec
        self._base = base_sec
        self._cap = cap_sec

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        if method.__api_method__ == GetUpdates.__api_method__:
            return await make_request(bot, method)
        name = method.__api_method__
        courtesy = name in _COURTESY or is_transient()
        deadline = self.courtesy_deadline_sec if courtesy else self.deadline_sec

        def wait(state: RetryCallState) -> float:
            return _backoff(state, base=self._base, cap=self._cap)

        def before_sleep(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome is not None else None
            log.warning(
                "Telegram %s failed (%s): retry %d in %.1fs",
                name,
                describe_error(error) if error else "?",
                state.attempt_number,
                state.upcoming_sleep,
            )

        retrying = AsyncRetrying(
            retry=retry_if_exception(is_transient_error),
            wait=wait,
            stop=stop_before_delay(deadline),
            before_sleep=before_sleep,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await make_request(bot, method)
        raise AssertionError("unreachable: tenacity re-raises the last error")


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


class KeepResponseTypesMiddleware(BaseRequestMiddleware):
    """Keep ``Response[T]`` of every method's result type alive (see the module doc)."""

    def __init__(self) -> None:
        self._kept: dict[Any, type[Any]] = {}

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        returning = method.__returning__
        if returning not in self._kept:
            self._kept[returning] = _response_type(returning)
        return await make_request(bot, method)


def _response_type(returning: Any) -> type[Any]:
    return cast("type[Any]", Response[returning])


def install_request_middlewares(bot: Bot, *, send_deadline_sec: float = 600.0) -> None:
    """Register the middlewares on `bot.session` in the documented order."""
    bot.session.middleware(KeepResponseTypesMiddleware())
    bot.session.middleware(NotModifiedMiddleware())
    bot.session.middleware(PlainTextFallbackMiddleware())
    bot.session.middleware(TransientRetryMiddleware(deadline_sec=send_deadline_sec))


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
