"""Admin commands about users: /users, /user, /ban, /unban, /allow, /disallow.

Each handler replies and returns the outcome for the audit trail. Changes apply
only to ids the bot has seen (every user who wrote to it); admins cannot be banned
or have their access changed by another admin.
"""

from __future__ import annotations

import html
import math

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import Message

from bot.operations.ops import Ops
from bot.telegram.handlers.admin_args import ArgumentError, parse_page, parse_user_id, shown
from bot.telegram.handlers.admin_format import answer_long, cut, when, who
from reasoning_core.ports import Account

PAGE_SIZE = 20
_REASON_MAX = 200
_NO_BAN = "is an admin: admins can't ban other admins."
_ALWAYS = "is an admin: admins always have access."


def _unknown(user_id: int) -> ArgumentError:
    return ArgumentError(f"No user with id <code>{user_id}</code> has written to me yet.")


async def _account(ops: Ops, user_id: int, *, refuse_admin: str | None = None) -> Account:
    """The stored account; with `refuse_admin`, ids in ADMIN_IDS are refused with that text
    even before they have written to the bot."""
    if refuse_admin and user_id in ops.admin_ids:
        raise ArgumentError(f"User <code>{user_id}</code> {refuse_admin}")
    account = await ops.accounts.get(user_id)
    if account is None:
        raise _unknown(user_id)
    if refuse_admin and _is_admin(ops, account):
        raise ArgumentError(f"User {who(account)} {refuse_admin}")
    return account


async def _target(ops: Ops, args: str | None, usage: str) -> tuple[Account, str]:
    user_id, rest = parse_user_id(args, usage=usage)
    return await _account(ops, user_id), rest


def _is_admin(ops: Ops, account: Account) -> bool:
    return account.id in ops.admin_ids or account.role == "admin"


def _flags(ops: Ops, account: Account) -> str:
    flags = ["admin" if _is_admin(ops, account) else "user", account.status]
    if account.allowed:
        flags.append("allowed")
    return " · ".join(flags)


async def users_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    page = parse_page(command.args, usage="/users [page]")
    total = await ops.accounts.count()
    pages = max(1, math.ceil(total / PAGE_SIZE))
    if page > pages:
        raise ArgumentError(
            f"Page {shown(str(page))} doesn't exist: there {'is' if pages == 1 else 'are'} "
            f"{pages} page{'s' if pages != 1 else ''} ({total} users)."
        )
    accounts = await ops.accounts.page(offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    lines = [f"<b>Users</b> — page {page} of {pages} ({total} users, latest contact first)"]
    for a in accounts:
        lines.append(
            f"• {who(a)} — {_flags(ops, a)} · {a.questions} questions · "
            f"last seen {when(a.last_seen_at)}"
        )
    if page < pages:
        lines.append(f"Next: /users {page + 1}")
    await answer_long(message, "\n".join(lines))
    return f"page {page} of {pages}"


async def user_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    account, _ = await _target(ops, command.args, "/user ID")
    today = await ops.usage.recent(account.id, days=1)
    week = await ops.usage.recent(account.id, days=7)
    role = "admin" if _is_admin(ops, account) else "user"
    if account.id in ops.admin_ids:
        role += " (ADMIN_IDS)"
    status: str = account.status
    if account.status == "banned":
        reason = f": {html.escape(account.ban_reason)}" if account.ban_reason else ""
        status += f" since {when(account.status_changed_at)}{reason}"
    allowlist = "yes" if account.allowed else "no"
    if ops.access_mode != "allowlist":
        allowlist += " (not enforced: ACCESS_MODE=open)"
    tokens_today = today[0].tokens if today else 0
    lines = [
        f"<b>User</b> {who(account)}",
        f"Role: {role}",
        f"Status: {status}",
        f"Allowlist: {allowlist}",
        f"Questions: {account.questions}",
        f"Tokens today: {tokens_today:,}; last 7 days: {sum(d.tokens for d in week):,} "
        f"in {sum(d.usage.llm_calls for d in week)} LLM calls",
        f"First seen: {when(account.created_at)}",
        f"Last seen: {when(account.last_seen_at)}",
    ]
    await message.answer("\n".join(lines))
    return f"shown {account.id}"


async def ban_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    user_id, reason = parse_user_id(command.args, usage="/ban ID [reason]")
    if message.from_user is not None and user_id == message.from_user.id:
        raise ArgumentError("You can't ban yourself.")
    account = await _account(ops, user_id, refuse_admin=_NO_BAN)
    reason = cut(reason, _REASON_MAX)
    by = message.from_user.id if message.from_user else 0
    was = account.status
    await ops.accounts.set_status(account.id, "banned", by=by, reason=reason or None)
    because = f" Reason: {html.escape(reason)}" if reason else ""
    again = " (was already banned; reason updated)" if was == "banned" else ""
    await message.answer(f"⛔ Banned {who(account)}{again}.{because}")
    return f"banned {account.id}"


async def unban_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    account, _ = await _target(ops, command.args, "/unban ID")
    if account.status != "banned":
        raise ArgumentError(f"User {who(account)} is not banned.")
    by = message.from_user.id if message.from_user else 0
    await ops.accounts.set_status(account.id, "active", by=by)
    await message.answer(f"✅ Unbanned {who(account)}.")
    return f"unbanned {account.id}"


async def _set_allowed(message: Message, command: CommandObject, ops: Ops, allowed: bool) -> str:
    user_id, _ = parse_user_id(command.args, usage="/allow ID" if allowed else "/disallow ID")
    account = await _account(ops, user_id, refuse_admin=None if allowed else _ALWAYS)
    by = message.from_user.id if message.from_user else 0
    await ops.accounts.set_allowed(account.id, allowed, by=by)
    note = "" if ops.access_mode == "allowlist" else " (ACCESS_MODE is open: anyone may ask now)"
    verb = "Allowed" if allowed else "Removed from the allowlist:"
    await message.answer(f"{'✅' if allowed else '🚫'} {verb} {who(account)}.{note}")
    return f"{'allowed' if allowed else 'disallowed'} {account.id}"


async def allow_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    return await _set_allowed(message, command, ops, True)


async def disallow_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    return await _set_allowed(message, command, ops, False)


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(users_handler, Command("users"))
    router.message.register(user_handler, Command("user"))
    router.message.register(ban_handler, Command("ban"))
    router.message.register(unban_handler, Command("unban"))
    router.message.register(allow_handler, Command("allow"))
    router.message.register(disallow_handler, Command("disallow"))
    return router
