"""Sending rendered HTML: split to Telegram's limit, one message per part."""

from __future__ import annotations

from aiogram.types import InlineKeyboardMarkup, Message

from bot.rendering import split_html


async def send_html(
    message: Message, html: str, *, reply_markup: InlineKeyboardMarkup | None = None
) -> list[Message]:
    """Send `html` as one or more messages; the keyboard goes on the last part.

    Retries after 429 and the plain-text fallback for parse errors happen in the
    request middlewares (bot/telegram_session.py), for every call alike.
    """
    parts = split_html(html)
    sent = []
    for index, part in enumerate(parts):
        markup = reply_markup if index == len(parts) - 1 else None
        sent.append(await message.answer(part, reply_markup=markup))
    return sent
