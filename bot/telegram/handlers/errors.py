"""The one place where an exception from a handler becomes a reply to the user.

The user reads what happened in plain words, what to do, and an error id, in
their language (ru/en); the exception, its message and traceback go to the log
line carrying the same id, for the admin the user quotes it to.
"""

from __future__ import annotations

import logging

from aiogram import Bot, Router
from aiogram.exceptions import TelegramAPIError
from aiogram.types import ErrorEvent, Update

from bot.delivery.context import current_delivery
from reasoning_core import (
    N_,
    StoreError,
    StoreUnavailableError,
    detect_language,
    gettext,
    new_error_id,
)

log = logging.getLogger(__name__)

TEXTS: dict[str, str] = {
    "generic": N_(
        "Sorry — something went wrong on my side (error {id}). Please try again; "
        "if it keeps happening, give your admin the error id {id}."
    ),
    "store": N_(
        "Sorry — I could not save or load your data just now (error {id}). Please try "
        "again in a minute; if it keeps happening, give your admin the error id {id}."
    ),
    "store_down": N_(
        "Sorry — my database is unreachable right now (error {id}). Please try again "
        "in a few minutes; if it keeps happening, give your admin the error id {id}."
    ),
}


async def error_handler(event: ErrorEvent, bot: Bot) -> bool:
    update = event.update
    delivery = current_delivery()
    if delivery is not None and isinstance(event.exception, StoreUnavailableError):
        # The update stays in the inbox and is answered once the database is back:
        # no "try again" now and a surprise answer later.
        log.warning("update %s waits for the database: %s", update.update_id, event.exception)
        delivery.retry_later = True
        return True
    error_id = new_error_id()
    log.error(
        "unhandled error %s in update %s: %s: %s",
        error_id,
        update.update_id,
        type(event.exception).__name__,
        event.exception,
        exc_info=event.exception,
        extra={"error_id": error_id},
    )
    chat_id = _chat_id(update)
    if chat_id is None:
        return True
    text = user_text(event.exception, error_id, _language(update))
    try:
        await bot.send_message(chat_id, text)
    except (TelegramAPIError, StoreError) as e:  # the log line is all we have
        log.error("could not tell chat %s about error %s: %s", chat_id, error_id, e)
    return True


def user_text(error: BaseException, error_id: str, language: str) -> str:
    """What the user reads about `error`: no internals, what to do, the error id."""
    kind = "generic"
    if isinstance(error, StoreUnavailableError):
        kind = "store_down"
    elif isinstance(error, StoreError):
        kind = "store"
    return gettext(language, TEXTS[kind]).format(id=error_id)


def _chat_id(update: Update) -> int | None:
    message = update.message or update.edited_message
    if update.callback_query and update.callback_query.message:
        return update.callback_query.message.chat.id
    return message.chat.id if message else None


def _language(update: Update) -> str:
    """The language of the user's message, else of their Telegram client."""
    message = update.message or update.edited_message
    text = (message.text or message.caption or "") if message else ""
    if any(ch.isalpha() for ch in text):
        return detect_language(text)
    user = message.from_user if message else None
    if update.callback_query:
        user = update.callback_query.from_user
    code = (user.language_code or "") if user else ""
    return "ru" if code.startswith("ru") else "en"


def create_router() -> Router:
    router = Router(name=__name__)
    router.errors.register(error_handler)
    return router
