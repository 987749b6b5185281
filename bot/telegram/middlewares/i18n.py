"""The language of an update, set for its handlers: aiogram's i18n with our catalogues.

`LanguageMiddleware` is aiogram's `I18nMiddleware` with the bot's rule
(bot/telegram/language.py `event_language`): a message's words, else the user's
Telegram app language. Handlers and the middlewares after it word their texts with
aiogram's ``gettext as _`` (the locale of the update). The catalogues are the core's
(reasoning_core/i18n): one per language, English as the message ids.
"""

from __future__ import annotations

from typing import Any

from aiogram.types import TelegramObject
from aiogram.utils.i18n import I18n, I18nMiddleware, get_i18n

from bot.telegram.language import event_language
from reasoning_core import DOMAIN, LOCALES_DIR


def catalogues() -> I18n:
    """aiogram's view of the catalogues: English (the msgids) unless a catalogue has the text."""
    return I18n(path=LOCALES_DIR, default_locale="en", domain=DOMAIN)


class LanguageMiddleware(I18nMiddleware):
    """Outer middleware: the update's handlers speak `event_language`."""

    async def get_locale(self, event: TelegramObject, data: dict[str, Any]) -> str:
        return event_language(event, data.get("event_from_user"))


def current_language() -> str:
    """The update's language, for the core's `pgettext` and per-language data (handlers only)."""
    return get_i18n().current_locale
