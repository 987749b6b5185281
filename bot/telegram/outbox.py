"""The outbox request middleware: exactly-once, never-lost replies.

`OutboxMiddleware`: while an update is being answered (`context.current_delivery`),
  each reply (sendMessage, sendDocument, sendPhoto) is written to the outbox under the
  update's next key before it is sent, and marked sent with Telegram's answer after.
  A key already sent is not sent again: its stored answer is returned instead.

Installed outermost (before bot/telegram/session.py's middlewares, whose innermost
retries transient errors), so one outbox row covers a reply's retries and its
plain-text fallback.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from aiogram.client.session.middlewares.base import (
    BaseRequestMiddleware,
    NextRequestMiddlewareType,
)
from aiogram.exceptions import ClientDecodeError, TelegramAPIError, TelegramBadRequest
from aiogram.methods import (
    AnswerCallbackQuery,
    SendDocument,
    SendMessage,
    SendPhoto,
    TelegramMethod,
)
from aiogram.methods.base import Response, TelegramType
from pydantic import BaseModel

from bot.delivery.context import current_delivery, is_transient
from bot.delivery.ports import Outbox
from bot.telegram.session import describe_error, is_transient_error
from reasoning_core import StoreError

if TYPE_CHECKING:
    from aiogram import Bot

log = logging.getLogger(__name__)

#: Replies: what the user must get exactly once.
REPLIES = (SendMessage, SendDocument, SendPhoto)


class OutboxMiddleware(BaseRequestMiddleware):
    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        delivery = current_delivery()
        if delivery is not None and isinstance(method, AnswerCallbackQuery):
            return await _answer_callback(make_request, bot, method)
        if delivery is None or is_transient() or not _is_reply(method):
            return await make_request(bot, method)
        key = delivery.next_key()
        entry = await self._outbox.begin(
            key,
            chat_id=_chat_id(method),
            method=method.__api_method__,
            request=_request(method),
        )
        if entry.status == "sent":
            log.info("reply %s was sent before this process took the update over", key)
            return _replayed(bot, method, entry.result)
        try:
            result = await make_request(bot, method)
        except (TelegramAPIError, ClientDecodeError) as e:
            await self._failed(key, e)
            raise
        await self._outbox.sent(key, _result(result))
        return result

    async def _failed(self, key: str, error: BaseException) -> None:
        try:
            await self._outbox.attempt_failed(
                key, describe_error(error), final=not is_transient_error(error)
            )
        except StoreError as e:
            log.error("could not record the failed send of reply %s: %s", key, e)


async def _answer_callback(
    make_request: NextRequestMiddlewareType[TelegramType],
    bot: Bot,
    method: TelegramMethod[TelegramType],
) -> Response[TelegramType]:
    """A button's acknowledgement is a courtesy: when the update is answered late (after
    a crash, or once the database is back), Telegram calls the query too old; that must
    not fail the answer that follows."""
    try:
        return await make_request(bot, method)
    except TelegramBadRequest as e:
        log.info("button acknowledgement refused (answered late?): %s", e.message)
        return cast("Response[TelegramType]", True)


def _is_reply(method: TelegramMethod[Any]) -> bool:
    return isinstance(method, REPLIES)


def _chat_id(method: TelegramMethod[Any]) -> int | None:
    chat_id = getattr(method, "chat_id", None)
    return chat_id if isinstance(chat_id, int) else None


def _request(method: TelegramMethod[Any]) -> dict[str, Any]:
    """What the reply says, for the record (files by name, not content)."""
    record: dict[str, Any] = {}
    for field in ("text", "caption"):
        value = getattr(method, field, None)
        if isinstance(value, str):
            record[field] = value
    for field in ("document", "photo"):
        value = getattr(method, field, None)
        if value is not None:
            record[field] = getattr(value, "filename", None) or str(value)
    return record


def _result(result: Any) -> Any:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", exclude_none=True, by_alias=True)
    return result


def _replayed(
    bot: Bot, method: TelegramMethod[TelegramType], stored: Any
) -> Response[TelegramType]:
    """Telegram's stored answer, as the method's result type."""
    returning = method.__returning__
    response = Response[returning].model_validate(  # type: ignore[valid-type]
        {"ok": True, "result": stored}, context={"bot": bot}
    )
    return cast("Response[TelegramType]", response.result)


def install_outbox(bot: Bot, outbox: Outbox) -> None:
    """Put `OutboxMiddleware` outermost on `bot.session` (before those already there)."""
    existing = list(bot.session.middleware)
    for middleware in existing:
        bot.session.middleware.unregister(middleware)
    bot.session.middleware(OutboxMiddleware(outbox))
    for middleware in existing:
        bot.session.middleware(middleware)
