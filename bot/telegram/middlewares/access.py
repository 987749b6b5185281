"""Access control per update: bot/access.py's `AccessPolicy` applied to Telegram.

Runs as an outer middleware after `UserMiddleware` (which creates the user), for
messages, edits and button presses:

- A refused user (banned, or not on the allowlist) gets a short refusal and nothing else.
- In groups a refusal is sent only to messages addressed to the bot; the rest
  of the group's chatter is ignored silently, as usual.

Handlers receive ``is_admin``; the same block sets the usage owner (whose token
budget LLM calls are charged to) and the log context (chat_id, user_id).
"""

from __future__ import annotations

import html
import logging
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.types import CallbackQuery, Message, TelegramObject
from aiogram.types import User as TelegramUser
from aiogram.utils.i18n import gettext as _

from bot.access import AccessPolicy
from bot.operations.billing import deferred_billing, usage_owner
from bot.operations.logging_setup import log_context
from bot.telegram.filters import AddressedToBot
from bot.telegram.middlewares.base import Handler
from reasoning_core import UsageStore

log = logging.getLogger(__name__)


class AccessMiddleware(BaseMiddleware):
    """Puts ``is_admin`` in the data and refuses banned or not-allowed users."""

    def __init__(self, policy: AccessPolicy, *, usage: UsageStore | None = None) -> None:
        self._policy = policy
        #: With a store, an update's first model calls are billed with its turn's write.
        self._usage = usage

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        tg_user: TelegramUser | None = data.get("event_from_user")
        data["is_admin"] = False
        if tg_user is None or tg_user.is_bot:
            return await handler(event, data)
        chat = data.get("event_chat")
        chat_id = chat.id if chat is not None else None
        with usage_owner(tg_user.id), log_context(chat_id=chat_id, user_id=tg_user.id):
            verdict = await self._policy.verdict(tg_user.id, known=data.get("user"))
            data["is_admin"] = verdict.is_admin
            if verdict.refusal is not None:
                log.info("update refused: %s", verdict.refusal.split(".")[0])
                text = _(verdict.refusal).format(user_id=tg_user.id)
                await _refuse(event, data["bot"], text)
                return None
            if self._usage is None:
                return await handler(event, data)
            async with deferred_billing(self._usage, tg_user.id):
                return await handler(event, data)


async def _refuse(event: TelegramObject, bot: Bot, text: str) -> None:
    if isinstance(event, CallbackQuery):
        await event.answer(html.unescape(_strip_code(text)), show_alert=True)
        return
    if isinstance(event, Message) and await _addressed(event, bot):
        await event.reply(text)


def _strip_code(text: str) -> str:
    return text.replace("<code>", "").replace("</code>", "")


async def _addressed(message: Message, bot: Bot) -> bool:
    """Private chats always; groups when the bot is mentioned, replied to or commanded by name."""
    if message.chat.type == "private":
        return True
    if await AddressedToBot()(message, bot):
        return True
    me = await bot.me()
    text = message.text or ""
    return bool(me.username) and text.startswith("/") and f"@{me.username}".lower() in text.lower()
