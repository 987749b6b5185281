"""Which language the bot's own words take: the question's, else the user's Telegram one.

A reply to a question speaks the question's language (the answer carries it:
`Answer.language`). A notice about a message that is not answered (busy, too
long, rate limited) speaks the language of that message's text, detected as the
reasoning core detects it; a command or a button without text of its own speaks
the language the user's Telegram app is set to. `event_language` is that rule for an
update: the i18n middleware (bot/telegram/middlewares/i18n.py) sets it for the handlers.
"""

from __future__ import annotations

from aiogram.types import CallbackQuery, Message, TelegramObject, User

from reasoning_core import Language, detect_language


def user_language(user: User | None) -> Language:
    """Russian for a Telegram app set to Russian, English otherwise."""
    code = (user.language_code or "") if user is not None else ""
    return "ru" if code.lower().startswith("ru") else "en"


def message_language(text: str | None, user: User | None) -> Language:
    """The language of a message's words (a leading /command aside); the user's app
    language when it has none."""
    words = (text or "").strip()
    if words.startswith("/"):
        words = words.partition(" ")[2]
    if any(ch.isalpha() for ch in words):
        return detect_language(words)
    return user_language(user)


def event_language(event: TelegramObject, user: User | None) -> Language:
    """The language of an update's replies: a message's words (a command's: the user's
    app language), else the user's app language (a button press)."""
    if isinstance(event, Message):
        text = event.text if event.text is not None else event.caption
        if text is None or text.startswith("/"):
            return user_language(user)
        return message_language(text, user)
    if isinstance(event, CallbackQuery):
        return user_language(event.from_user)
    return user_language(user)
