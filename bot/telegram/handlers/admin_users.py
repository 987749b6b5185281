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
from aiogram.utils.i18n import gettext as _

from bot.operations.ops import Ops
from bot.telegram.handlers.admin_args import ArgumentError, parse_page, parse_user_id, shown
from bot.telegram.handlers.admin_format import answer_long, cut, when, who
from reasoning_core import N_, Account

PAGE_SIZE = 20
_REASON_MAX = 200
_NO_BAN = N_("User {user} is an admin: admins can't ban other admins.")
_ALWAYS = N_("User {user} is an admin: admins always have access.")


def _unknown(user_id: int) -> ArgumentError:
    text = _("No user with id <code>{id}</code> has written to me yet.")
    return ArgumentError(text.format(id=user_id))


async def _account(ops: Ops, user_id: int, *, refuse_admin: str | None = None) -> Account:
    """The stored account; with `refuse_admin`, ids in ADMIN_IDS are refused with that text
    even before they have written to the bot."""
    if refuse_admin and user_id in ops.admin_ids:
        raise ArgumentError(_(refuse_admin).format(user=f"<code>{user_id}</code>"))
    account = await ops.accounts.get(user_id)
    if account is None:
        raise _unknown(user_id)
    if refuse_admin and _is_admin(ops, account):
        raise ArgumentError(_(refuse_admin).format(user=who(account)))
    return account


async def _target(ops: Ops, args: str | None, usage: str) -> tuple[Account, str]:
    user_id, rest = parse_user_id(args, usage=usage)
    return await _account(ops, user_id), rest


def _is_admin(ops: Ops, account: Account) -> bool:
    return account.id in ops.admin_ids or account.role == "admin"


def _role(admin: bool) -> str:
    return _("admin") if admin else _("user")


def _status(status: str) -> str:
    """An account's status in the update's language (an unknown one as it is stored)."""
    words = {"active": _("active"), "banned": _("banned")}
    return words.get(status, status)


def _flags(ops: Ops, account: Account) -> str:
    flags = [_role(_is_admin(ops, account)), _status(account.status)]
    if account.allowed:
        flags.append(_("allowed"))
    return " · ".join(flags)


async def users_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    page = parse_page(command.args, usage="/users [page]")
    total = await ops.accounts.count()
    pages = max(1, math.ceil(total / PAGE_SIZE))
    if page > pages:
        text = _(
            "Page {page} doesn't exist: there is {pages} page ({total} users).",
            "Page {page} doesn't exist: there are {pages} pages ({total} users).",
            n=pages,
        )
        raise ArgumentError(text.format(page=shown(str(page)), pages=pages, total=total))
    accounts = await ops.accounts.page(offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    title = _("<b>Users</b> — page {page} of {pages} ({total} users, latest contact first)")
    lines = [title.format(page=page, pages=pages, total=total)]
    line = _("• {who} — {flags} · {questions} questions · last seen {when}")
    for a in accounts:
        lines.append(
            line.format(
                who=who(a), flags=_flags(ops, a), questions=a.questions, when=when(a.last_seen_at)
            )
        )
    if page < pages:
        lines.append(_("Next: /users {page}").format(page=page + 1))
    await answer_long(message, "\n".join(lines))
    return f"page {page} of {pages}"


async def user_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    account, _rest = await _target(ops, command.args, "/user ID")
    today = await ops.usage.recent(account.id, days=1)
    week = await ops.usage.recent(account.id, days=7)
    role = _role(_is_admin(ops, account))
    if account.id in ops.admin_ids:
        role += " (ADMIN_IDS)"
    status = _status(account.status)
    if account.status == "banned":
        reason = f": {html.escape(account.ban_reason)}" if account.ban_reason else ""
        status += _(" since {when}").format(when=when(account.status_changed_at)) + reason
    allowlist = _("yes") if account.allowed else _("no")
    if ops.access_mode != "allowlist":
        allowlist += _(" (not enforced: ACCESS_MODE=open)")
    tokens_today = today[0].tokens if today else 0
    tokens = _("Tokens today: {today:,}; last 7 days: {week:,} in {calls} LLM calls")
    lines = [
        _("<b>User</b> {who}").format(who=who(account)),
        _("Role: {role}").format(role=role),
        _("Status: {status}").format(status=status),
        _("Allowlist: {allowlist}").format(allowlist=allowlist),
        _("Questions: {count}").format(count=account.questions),
        tokens.format(
            today=tokens_today,
            week=sum(d.tokens for d in week),
            calls=sum(d.usage.llm_calls for d in week),
        ),
        _("First seen: {when}").format(when=when(account.created_at)),
        _("Last seen: {when}").format(when=when(account.last_seen_at)),
    ]
    await message.answer("\n".join(lines))
    return f"shown {account.id}"


async def ban_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    user_id, reason = parse_user_id(command.args, usage="/ban ID [reason]")
    if message.from_user is not None and user_id == message.from_user.id:
        raise ArgumentError(_("You can't ban yourself."))
    account = await _account(ops, user_id, refuse_admin=_NO_BAN)
    reason = cut(reason, _REASON_MAX)
    by = message.from_user.id if message.from_user else 0
    was = account.status
    await ops.accounts.set_status(account.id, "banned", by=by, reason=reason or None)
    because = _(" Reason: {reason}").format(reason=html.escape(reason)) if reason else ""
    again = _(" (was already banned; reason updated)") if was == "banned" else ""
    banned = _("⛔ Banned {who}{again}.{because}")
    await message.answer(banned.format(who=who(account), again=again, because=because))
    return f"banned {account.id}"


async def unban_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    account, _rest = await _target(ops, command.args, "/unban ID")
    if account.status != "banned":
        raise ArgumentError(_("User {who} is not banned.").format(who=who(account)))
    by = message.from_user.id if message.from_user else 0
    await ops.accounts.set_status(account.id, "active", by=by)
    await message.answer(_("✅ Unbanned {who}.").format(who=who(account)))
    return f"unbanned {account.id}"


async def _set_allowed(message: Message, command: CommandObject, ops: Ops, allowed: bool) -> str:
    user_id, _rest = parse_user_id(command.args, usage="/allow ID" if allowed else "/disallow ID")
    account = await _account(ops, user_id, refuse_admin=None if allowed else _ALWAYS)
    by = message.from_user.id if message.from_user else 0
    await ops.accounts.set_allowed(account.id, allowed, by=by)
    note = ""
    if ops.access_mode != "allowlist":
        note = _(" (ACCESS_MODE is open: anyone may ask now)")
    if allowed:
        text = _("✅ Allowed {who}.{note}")
    else:
        text = _("🚫 Removed from the allowlist: {who}.{note}")
    await message.answer(text.format(who=who(account), note=note))
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
