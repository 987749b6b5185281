"""Small text helpers shared by the admin commands' replies."""

from __future__ import annotations

import html
from datetime import UTC, datetime

from aiogram.types import Message

from bot.replies.rendering import split_html
from reasoning_core.ports import Account


def when(moment: datetime | None) -> str:
    if moment is None:
        return "never"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def duration(seconds: float) -> str:
    """1 d 2 h, 3 h 4 min, 5 min, 42 s."""
    seconds = int(max(seconds, 0))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min" if minutes else f"{secs} s"


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
