"""Filters: in groups the bot speaks only when it is addressed."""

from __future__ import annotations

from typing import Any

from aiogram import Bot
from aiogram.filters import BaseFilter
from aiogram.types import Message


class AddressedToBot(BaseFilter):
    """True in private chats; in groups only when the bot is @mentioned or replied to.

    On success it passes `question_text`: the text with the mention removed.
    """

    async def __call__(self, message: Message, bot: Bot) -> bool | dict[str, Any]:
        text = message.text or ""
        if message.chat.type == "private":
            return {"question_text": text.strip()}
        me = await bot.me()
        mention = f"@{me.username}" if me.username else None
        replied_to_bot = bool(
            message.reply_to_message
            and message.reply_to_message.from_user
            and message.reply_to_message.from_user.id == me.id
        )
        if mention and mention.lower() in text.lower():
            start = text.lower().index(mention.lower())
            text = text[:start] + text[start + len(mention) :]
            return {"question_text": text.strip()}
        if replied_to_bot:
            return {"question_text": text.strip()}
        return False
