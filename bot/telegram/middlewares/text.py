"""Clean text first: every message's text and caption normalised before anyone reads them."""

from __future__ import annotations

from typing import Any

from aiogram import BaseMiddleware
from aiogram.types import Message, TelegramObject

from bot.telegram.middlewares.base import Handler
from reasoning_core import clean_text


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
