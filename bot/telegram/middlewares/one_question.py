"""One question at a time per chat: a second one while the first is answered is turned away."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from aiogram import BaseMiddleware
from aiogram.dispatcher.flags import get_flag
from aiogram.types import Message, TelegramObject

from bot.telegram.language import message_language
from bot.telegram.middlewares.base import Handler
from reasoning_core import N_, gettext

BUSY_TEXT = N_("⏳ Still working on your previous question — send this again once I've answered.")


def busy_text(language: str) -> str:
    """The "one question at a time" notice in `language`."""
    return gettext(language, BUSY_TEXT)


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
