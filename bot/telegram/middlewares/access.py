"""Access control per update: who is an admin, who is banned, who is allowed.

Runs as an outer middleware after `UserMiddleware` (which creates the user), for
messages, edits and button presses:

- ADMIN_IDS (config) and role ``admin`` (database) make an admin; config wins:
  an id in ADMIN_IDS that is banned in the database stays admin (logged).
- Banned users get a short refusal and nothing else.
- ACCESS_MODE=allowlist: users not on the allowlist get a polite refusal with
  their id, to pass to an admin.
- In groups a refusal is sent only to messages addressed to the bot; the rest
  of the group's chatter is ignored silently, as usual.

Handlers receive ``is_admin``; the same block sets the usage owner (whose token
budget LLM calls are charged to) and the log context (chat_id, user_id).
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.types import CallbackQuery, Message, TelegramObject
from aiogram.types import User as TelegramUser
from aiogram.utils.i18n import gettext as _

from bot.operations.billing import deferred_billing, usage_owner
from bot.operations.logging_setup import log_context
from bot.telegram.filters import AddressedToBot
from bot.telegram.middlewares.base import Handler
from reasoning_core.errors import StoreError
from reasoning_core.i18n import N_
from reasoning_core.ports import Account, AccountStore, UsageStore, User

log = logging.getLogger(__name__)

#: The refusals, English msgids: sent in the update's language (`LanguageMiddleware`).
BANNED_TEXT = N_("⛔ You are banned from using this bot.")
STORE_DOWN_TEXT = N_("Sorry — I can't check access right now (my database is unreachable).")
ALLOWLIST_TEXT = N_(
    "🔒 Sorry, this bot is available to invited users only. If you should have access, "
    "ask an admin to allow your id: <code>{user_id}</code>"
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """An admin or not, and the refusal to send instead of handling (None: go ahead): an
    English msgid, ``{user_id}`` filled in when it is sent."""

    is_admin: bool
    refusal: str | None = None


class AccessMiddleware(BaseMiddleware):
    """Puts ``is_admin`` in the data and refuses banned or not-allowed users."""

    def __init__(
        self,
        *,
        accounts: AccountStore,
        admin_ids: frozenset[int],
        access_mode: str,
        usage: UsageStore | None = None,
    ) -> None:
        self._accounts = accounts
        #: With a store, an update's first model calls are billed with its turn's write.
        self._usage = usage
        self._admin_ids = admin_ids
        self._allowlist = access_mode == "allowlist"

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        tg_user: TelegramUser | None = data.get("event_from_user")
        data["is_admin"] = False
        if tg_user is None or tg_user.is_bot:
            return await handler(event, data)
        chat = data.get("event_chat")
        chat_id = chat.id if chat is not None else None
        with usage_owner(tg_user.id), log_context(chat_id=chat_id, user_id=tg_user.id):
            verdict = await self.verdict(tg_user.id, known=data.get("user"))
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

    async def verdict(self, user_id: int, *, known: User | None = None) -> Verdict:
        """Decide from ADMIN_IDS, the stored role and status, and the access mode.

        `known` is the user `UserMiddleware` has just loaded: enough for role and status,
        so only the allowlist (or a failed load) costs another query.
        """
        configured = user_id in self._admin_ids
        account: User | None = known
        if account is None or (self._allowlist and not configured):
            try:
                account = await self._accounts.get(user_id)
            except StoreError as e:
                log.error("access check failed for user %s: %s", user_id, e)
                if configured or not self._allowlist:
                    return Verdict(is_admin=configured)
                return Verdict(is_admin=False, refusal=STORE_DOWN_TEXT)
        is_admin = configured or (account is not None and account.role == "admin")
        if account is not None and account.status == "banned":
            if not configured:
                return Verdict(is_admin=False, refusal=BANNED_TEXT)
            log.warning(
                "user %s is banned in the database but listed in ADMIN_IDS: config wins", user_id
            )
        allowed = isinstance(account, Account) and account.allowed
        if self._allowlist and not is_admin and not allowed:
            return Verdict(is_admin=False, refusal=ALLOWLIST_TEXT)
        return Verdict(is_admin=is_admin)


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
