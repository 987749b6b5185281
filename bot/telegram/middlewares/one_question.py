"""Per-update middlewares: clean text, who is asking, and one question at a time per chat."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

from aiogram import BaseMiddleware
from aiogram.dispatcher.flags import get_flag
from aiogram.types import Message, TelegramObject, User

from bot.telegram.input_text import clean_text
from bot.telegram.language import message_language, pick
from reasoning_core.errors import StoreError
from reasoning_core.ports import UserStore

log = logging.getLogger(__name__)

Handler = Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]]

BUSY_TEXT = "⏳ Still working on your previous question — send this again once I've answered."
_BUSY = {
    "en": BUSY_TEXT,
    "ru": "⏳ Ещё отвечаю на ваш прошлый вопрос — пришлите это снова, когда я отвечу.",
}


def busy_text(language: str) -> str:
    """The "one question at a time" notice in `language`."""
    return pick(_BUSY, language)


class NormalisedTextMiddleware(BaseMiddleware):
    """Every message's text and caption pass `clean_text` before any filter or handler.

    Registered first, so the user middleware, the filters, the handlers and the
    stores all see (and store) the same normalised text.
    """

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        if isinstance(event, Message):
            event = _normalised(event)
        return await handler(event, data)


def _normalised(message: Message) -> Message:
    changes: dict[str, str] = {}
    for field in ("text", "caption"):
        value = getattr(message, field)
        if isinstance(value, str) and (clean := clean_text(value)) != value:
            changes[field] = clean
    return message.model_copy(update=changes) if changes else message


class UserMiddleware(BaseMiddleware):
    """Creates the user on first contact and refreshes last_seen; puts `user` in the data."""

    def __init__(self, users: UserStore) -> None:
        self._users = users

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        tg_user: User | None = data.get("event_from_user")
        data["user"] = None
        if tg_user is not None and not tg_user.is_bot:
            try:
                data["user"] = await self._users.touch(
                    tg_user.id,
                    username=clean_text(tg_user.username) if tg_user.username else None,
                    full_name=clean_text(tg_user.full_name),
                )
            except StoreError as e:
                # The question can still be answered; only persistence will suffer.
                log.error("could not load user %s: %s", tg_user.id, e)
        return await handler(event, data)


class ChatLocks(Protocol):
    """One question at a time per chat.

    A second question while the first is being answered is turned away with a
    short notice rather than queued: a queue would answer stale questions after
    a slow deep analysis, and the user can simply resend. The bot holds the locks
    in PostgreSQL (bot/delivery/limits.py), so they hold across replicas.
    """

    def claim(self, chat_id: int) -> AbstractAsyncContextManager[bool]:
        """``async with locks.claim(chat_id) as claimed``: False when the chat is busy."""
        ...


class LocalChatLocks:
    """`ChatLocks` in this process's memory (one process, no database)."""

    def __init__(self) -> None:
        self._busy: set[int] = set()

    @asynccontextmanager
    async def claim(self, chat_id: int) -> AsyncIterator[bool]:
        """Yields True and holds the chat, or yields False when the chat is busy."""
        if chat_id in self._busy:
            yield False
            return
        self._busy.add(chat_id)
        try:
            yield True
        finally:
            self._busy.discard(chat_id)


class OneQuestionPerChatMiddleware(BaseMiddleware):
    """Message handlers flagged `one_at_a_time` hold their chat's lock while they run."""

    def __init__(self, locks: ChatLocks) -> None:
        self._locks = locks

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        if not isinstance(event, Message) or not get_flag(data, "one_at_a_time"):
            return await handler(event, data)
        async with self._locks.claim(event.chat.id) as claimed:
            if not claimed:
                await event.reply(busy_text(message_language(event.text, event.from_user)))
                return None
            return await handler(event, data)
