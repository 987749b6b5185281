"""Admin commands for the HTTP API's keys: /apikeys, /apikey_revoke NAME.

Keys are made with ``whytree apikey create NAME --user ID`` on the operator's
terminal: a key is a secret and is never sent in a chat, so Telegram only lists
them (names, owners, limits — never the key) and revokes them.
"""

from __future__ import annotations

import html

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import Message
from aiogram.utils.i18n import gettext as _

from bot.operations.ops import Ops
from bot.telegram.handlers.admin_args import ArgumentError, shown, split_args
from bot.telegram.handlers.admin_format import answer_long, when
from reasoning_core import N_

_NOT_WIRED = N_("The HTTP API's keys are not available in this process.")


async def api_keys_handler(message: Message, ops: Ops) -> str:
    if ops.api_keys is None:
        raise ArgumentError(_(_NOT_WIRED))
    keys = await ops.api_keys.list()
    if not keys:
        await message.answer(
            _(
                "No API keys. Make one on the server: "
                "<code>whytree apikey create NAME --user ID</code>"
            )
        )
        return "none"
    lines = [_("🔑 <b>HTTP API keys</b> (/apikey_revoke NAME ends one)")]
    for key in keys:
        state = _("live")
        if key.revoked_at:
            state = _("revoked {when}").format(when=when(key.revoked_at))
        limit = _("no rate limit")
        if key.rate_limit_per_min:
            limit = _("{count}/min").format(count=key.rate_limit_per_min)
        line = _("• <code>{name}</code> · user {user} · {limit} · {state} · made {when}")
        lines.append(
            line.format(
                name=html.escape(key.name),
                user=key.user_id,
                limit=limit,
                state=state,
                when=when(key.created_at),
            )
        )
    await answer_long(message, "\n".join(lines))
    return f"listed {len(keys)}"


async def api_key_revoke_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    if ops.api_keys is None:
        raise ArgumentError(_(_NOT_WIRED))
    name, _rest = split_args(command.args)
    if not name:
        raise ArgumentError(_("Which key? Usage: <code>/apikey_revoke NAME</code> (see /apikeys)"))
    if not await ops.api_keys.revoke(name):
        text = _("No live key named “{name}” (see /apikeys).")
        raise ArgumentError(text.format(name=shown(name)))
    text = _("🔑 Key <code>{name}</code> is revoked.")
    await message.answer(text.format(name=html.escape(name)))
    return f"revoked {name}"


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(api_keys_handler, Command("apikeys"))
    router.message.register(api_key_revoke_handler, Command("apikey_revoke"))
    return router
