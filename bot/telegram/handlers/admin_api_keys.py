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

from bot.operations.ops import Ops
from bot.telegram.handlers.admin_args import ArgumentError, shown, split_args
from bot.telegram.handlers.admin_format import answer_long, when

_NOT_WIRED = "The HTTP API's keys are not available in this process."


async def api_keys_handler(message: Message, ops: Ops) -> str:
    if ops.api_keys is None:
        raise ArgumentError(_NOT_WIRED)
    keys = await ops.api_keys.list()
    if not keys:
        await message.answer(
            "No API keys. Make one on the server: <code>whytree apikey create NAME --user ID"
            "</code>"
        )
        return "none"
    lines = ["🔑 <b>HTTP API keys</b> (/apikey_revoke NAME ends one)"]
    for key in keys:
        state = f"revoked {when(key.revoked_at)}" if key.revoked_at else "live"
        limit = f"{key.rate_limit_per_min}/min" if key.rate_limit_per_min else "no rate limit"
        lines.append(
            f"• <code>{html.escape(key.name)}</code> · user {key.user_id} · {limit} · "
            f"{state} · made {when(key.created_at)}"
        )
    await answer_long(message, "\n".join(lines))
    return f"listed {len(keys)}"


async def api_key_revoke_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    if ops.api_keys is None:
        raise ArgumentError(_NOT_WIRED)
    name, _ = split_args(command.args)
    if not name:
        raise ArgumentError("Which key? Usage: <code>/apikey_revoke NAME</code> (see /apikeys)")
    if not await ops.api_keys.revoke(name):
        raise ArgumentError(f"No live key named “{shown(name)}” (see /apikeys).")
    await message.answer(f"🔑 Key <code>{html.escape(name)}</code> is revoked.")
    return f"revoked {name}"


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(api_keys_handler, Command("apikeys"))
    router.message.register(api_key_revoke_handler, Command("apikey_revoke"))
    return router
