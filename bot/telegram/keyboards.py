"""Inline keyboards: clarifying questions with their suggested answers."""

from __future__ import annotations

from aiogram.filters.callback_data import CallbackData
from aiogram.types import InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from reasoning_core import ClarificationPrompt

#: Option index meaning "I'll type my own answer".
OWN_ANSWER = -1


class ClarifyCallback(CallbackData, prefix="clar"):
    """Only short ids travel in callback data (Telegram allows 64 bytes)."""

    cid: str
    q: int
    o: int


def clarification_keyboard(prompt: ClarificationPrompt, language: str) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    for index, option in enumerate(prompt.options):
        builder.button(
            text=option,
            callback_data=ClarifyCallback(cid=prompt.clarification_id, q=prompt.index, o=index),
        )
    own = "✍️ Свой ответ" if language == "ru" else "✍️ Type my own answer"
    builder.button(
        text=own,
        callback_data=ClarifyCallback(cid=prompt.clarification_id, q=prompt.index, o=OWN_ANSWER),
    )
    builder.adjust(1)
    return builder.as_markup()
