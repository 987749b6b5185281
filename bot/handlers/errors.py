"""The one place where an exception from a handler becomes a reply to the user."""

from __future__ import annotations

import logging

from aiogram import Bot, Router
from aiogram.exceptions import TelegramAPIError
from aiogram.types import ErrorEvent

from reasoning_core.errors import StoreError

log = logging.getLogger(__name__)

GENERIC_TEXT = "Sorry — something went wrong on my side. It has been logged; please try again."
STORE_TEXT = "Sorry — my database is unreachable right now. Please try again in a minute."


async def error_handler(event: ErrorEvent, bot: Bot) -> bool:
    update = event.update
    log.error(
        "unhandled error in update %s: %s: %s",
        update.update_id,
        type(event.exception).__name__,
        event.exception,
        exc_info=event.exception,
    )
    message = update.message or update.edited_message
    chat_id = message.chat.id if message else None
    if update.callback_query and update.callback_query.message:
        chat_id = update.callback_query.message.chat.id
    if chat_id is None:
        return True
    text = STORE_TEXT if isinstance(event.exception, StoreError) else GENERIC_TEXT
    try:
        await bot.send_message(chat_id, text)
    except (
        TelegramAPIError
    ) as e:  # Telegram itself is failing; the log line above is all we can do
        log.error("could not tell chat %s about the error: %s", chat_id, e)
    return True


def create_router() -> Router:
    router = Router(name=__name__)
    router.errors.register(error_handler)
    return router
