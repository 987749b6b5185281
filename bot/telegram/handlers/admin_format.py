"""Small text helpers shared by the admin commands' replies (in the update's language)."""

from __future__ import annotations

import html
from datetime import UTC, datetime

from aiogram.types import Message
from aiogram.utils.i18n import gettext as _

from bot.telegram.replies.rendering import split_html
from reasoning_core import Account


def when(moment: datetime | None) -> str:
    if moment is None:
        return _("never")
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def duration(seconds: float) -> str:
    """1 d 2 h, 3 h 4 min, 5 min, 42 s."""
    seconds = int(max(seconds, 0))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return _("{days} d {hours} h").format(days=days, hours=hours)
    if hours:
        return _("{hours} h {minutes} min").format(hours=hours, minutes=minutes)
    if minutes:
        return _("{minutes} min").format(minutes=minutes)
    return _("{seconds} s").format(seconds=secs)


def who(account: Account) -> str:
    """Id, @username and name, escaped."""
    parts = [f"<code>{account.id}</code>"]
    if account.username:
        parts.append("@" + html.escape(account.username))
    if account.full_name:
        parts.append(f"({html.escape(account.full_name)})")
    return " ".join(parts)


def cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def answer_long(message: Message, text: str) -> None:
    """Send HTML that may exceed Telegram's limit, split into valid parts."""
    for part in split_html(text):
        await message.answer(part)
