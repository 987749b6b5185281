"""Admin commands: checked on every call, invisible to everyone else, all audited.

The router is registered before the fallback router. For non-admins its filter
fails, so an admin command falls through to the unknown-command reply (in groups:
silence), exactly as if the command did not exist. For admins every command is
written to the audit trail with its arguments and outcome, refusals included.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from aiogram import BaseMiddleware, Router
from aiogram.filters import BaseFilter, CommandObject
from aiogram.types import Message, TelegramObject
from aiogram.utils.i18n import gettext as _

from bot.telegram.handlers import admin_api_keys, admin_reports, admin_trees, admin_users, usage
from bot.telegram.handlers.admin_args import ArgumentError
from bot.telegram.middlewares.base import Handler
from reasoning_core import N_, AuditEntry, AuditStore, StoreError

log = logging.getLogger(__name__)

ADMIN_COMMANDS = [
    ("/stats [24h|7d|30d]", N_("answers, strategies, confidence, tokens, users")),
    (N_("/users [page]"), N_("everyone who wrote to me")),
    ("/user ID", N_("role, status, usage, last seen")),
    (N_("/ban ID [reason]"), N_("refuse a user")),
    ("/unban ID", N_("lift a ban")),
    ("/allow ID", N_("add to the allowlist")),
    ("/disallow ID", N_("remove from the allowlist")),
    (N_("/trees [n]"), N_("recent analyses")),
    ("/tree ID", N_("show one analysis tree")),
    ("/revoke_links ID", N_("end the browser links to one analysis")),
    ("/health", N_("database, LLM, job queue, version, uptime")),
    ("/runbooks", N_("loaded runbooks and load errors")),
    ("/reload_runbooks", N_("read the runbook files again")),
    (N_("/audit [n]"), N_("recent admin actions")),
    ("/apikeys", N_("HTTP API keys (whytree apikey create makes one)")),
    (N_("/apikey_revoke NAME"), N_("end an HTTP API key")),
]

#: Appended to /help for admins (English; `admin_help` in the update's language).
ADMIN_HELP = "\n\n<b>Admin commands</b>\n" + "\n".join(
    f"{command} — {description}" for command, description in ADMIN_COMMANDS
)


def admin_help() -> str:
    """The admin part of /help in the update's language."""
    lines = (f"{_(command)} — {_(description)}" for command, description in ADMIN_COMMANDS)
    return "\n\n<b>" + _("Admin commands") + "</b>\n" + "\n".join(lines)


_TAG = re.compile(r"<[^>]+>")


class IsAdmin(BaseFilter):
    """True for admins; `is_admin` is decided per update by bot/telegram/middlewares/access.py."""

    async def __call__(self, event: TelegramObject, is_admin: bool = False) -> bool:
        return is_admin


class AuditMiddleware(BaseMiddleware):
    """Records every admin command; turns `ArgumentError` into its reply."""

    def __init__(self, audit: AuditStore) -> None:
        self._audit = audit

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        if not isinstance(event, Message):
            return await handler(event, data)
        outcome = ""
        try:
            result = await handler(event, data)
            outcome = result if isinstance(result, str) else "done"
            return result
        except ArgumentError as e:
            outcome = "refused: " + _TAG.sub("", e.text)
            await event.reply(e.text)
            return None
        except Exception as e:  # recorded, then left to the errors router
            outcome = f"failed: {type(e).__name__}"
            raise
        finally:
            await self._record(event, data.get("command"), outcome)

    async def _record(self, message: Message, command: CommandObject | None, outcome: str) -> None:
        entry = AuditEntry(
            admin_id=message.from_user.id if message.from_user else 0,
            chat_id=message.chat.id,
            action=command.command if command else (message.text or "?").split()[0].lstrip("/"),
            args=(command.args or "") if command else "",
            outcome=outcome,
        )
        try:
            await self._audit.record(entry)
        except StoreError as e:
            log.error("could not write the audit entry %s: %s", entry.action, e)


def create_router(audit: AuditStore) -> Router:
    """Everyone's /usage, then the admin commands behind `IsAdmin` and the audit."""
    admin = Router(name=__name__)
    admin.message.filter(IsAdmin())
    admin.message.middleware(AuditMiddleware(audit))
    admin.include_routers(
        admin_users.create_router(),
        admin_reports.create_router(),
        admin_trees.create_router(),
        admin_api_keys.create_router(),
    )
    router = Router(name=f"{__name__}.root")
    router.include_routers(usage.create_router(), admin)
    return router
