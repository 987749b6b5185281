"""Reading the bot's replies off the fake Telegram server, without deep-analysis status lines."""

from __future__ import annotations

import json
from typing import Any

from fake_servers.telegram.server import WAIT_SEC, FakeTelegramServer, RecordedCall


def replies(telegram: FakeTelegramServer, chat_id: int) -> list[RecordedCall]:
    """What the bot answered, without the live status lines ("🔎 ...") of deep analyses."""
    return [m for m in telegram.sent_messages(chat_id) if not m.text.startswith("🔎 ")]


async def wait_for_replies(
    telegram: FakeTelegramServer, chat_id: int, count: int, *, seconds: float = WAIT_SEC
) -> list[RecordedCall]:
    await telegram.wait_for(lambda: len(replies(telegram, chat_id)) >= count, timeout=seconds)
    return replies(telegram, chat_id)


async def next_reply(telegram: FakeTelegramServer, chat_id: int) -> RecordedCall:
    """Wait for the reply after the ones already sent (call before pushing the update)."""
    count = len(replies(telegram, chat_id))
    return (await wait_for_replies(telegram, chat_id, count + 1))[count]


def buttons(call: RecordedCall) -> list[tuple[str, str]]:
    """(text, callback_data) of every inline button on a sent message (URL buttons: the URL)."""
    markup: Any = call.params.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [
        (b["text"], b.get("callback_data") or b.get("url", ""))
        for row in markup.get("inline_keyboard", [])
        for b in row
    ]
