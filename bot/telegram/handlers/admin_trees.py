"""Admin views of analyses and runbooks: /trees [n], /tree ID, /revoke_links ID, /runbooks,
/reload_runbooks."""

from __future__ import annotations

import html
import re

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import Message
from aiogram.utils.i18n import gettext as _

from bot.operations.ops import Ops
from bot.telegram.handlers.admin_args import ArgumentError, parse_count, shown, split_args
from bot.telegram.handlers.admin_format import answer_long, cut, when
from bot.telegram.middlewares.i18n import current_language
from reasoning_core import Language, NotFoundError, RunbookSet, pgettext, render_tree_text

TREES_DEFAULT, TREES_MAX = 10, 50
TREE_LINES = 80
_TREE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


def _status(status: str) -> str:
    """A tree's status in the update's language (an unknown one as it is stored)."""
    language = current_language()
    statuses = {
        "active": pgettext(language, "tree status", "active"),
        "completed": pgettext(language, "tree status", "completed"),
        "failed": pgettext(language, "tree status", "failed"),
    }
    return statuses.get(status, status)


def _not_a_tree_id() -> str:
    return _("“{value}” is not a tree id (see /trees).")


async def trees_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    limit = parse_count(command.args, default=TREES_DEFAULT, maximum=TREES_MAX, usage="/trees [n]")
    trees = await ops.trees.list(limit=limit)
    if not trees:
        await message.answer(_("No analyses yet: deep questions grow trees, and none has run."))
        return "none"
    title = _("🌳 <b>Recent analyses</b> ({count}, newest first; /tree ID shows one)")
    lines = [title.format(count=len(trees))]
    for t in trees:
        cause = html.escape(cut(t.primary_title, 60)) if t.primary_title else _("no primary cause")
        confidence = "" if t.confidence is None else f" · {t.confidence:.2f}"
        lines.append(
            f"• <code>{html.escape(t.id)}</code> · {_status(t.status)} · {cause}{confidence} · "
            f"{when(t.created_at)}\n  {html.escape(cut(t.task, 80))}"
        )
    await answer_long(message, "\n".join(lines))
    return f"listed {len(trees)}"


async def tree_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    tree_id, _rest = split_args(command.args)
    if not tree_id:
        raise ArgumentError(
            _("Which tree? Usage: <code>/tree ID</code> (ids are listed by /trees)")
        )
    if not _TREE_ID.match(tree_id):
        raise ArgumentError(_not_a_tree_id().format(value=shown(tree_id)))
    try:
        tree = await ops.trees.load(tree_id)
    except NotFoundError:
        text = _("No tree with id <code>{id}</code> (see /trees).")
        raise ArgumentError(text.format(id=html.escape(tree_id))) from None
    status = _("Status: {status}").format(status=_status(tree.status))
    header = [f"🌳 <b>{html.escape(cut(tree.task, 200))}</b>", status]
    if tree.synthesis is not None:
        s = tree.synthesis
        cause = _("Primary cause: {cause} · {confidence}").format(
            cause=html.escape(s.primary.title), confidence=f"{s.confidence:.2f}"
        )
        header.append(cause)
    body = "\n".join(render_tree_text(tree, max_lines=TREE_LINES))
    await answer_long(message, "\n".join(header) + f"\n<pre>{html.escape(body)}</pre>")
    return f"shown {tree_id}"


async def revoke_links_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    """End every live link to one analysis page (a leaked link stops working at once)."""
    tree_id, _rest = split_args(command.args)
    if not tree_id:
        raise ArgumentError(
            _("Which tree? Usage: <code>/revoke_links ID</code> (ids are listed by /trees)")
        )
    if not _TREE_ID.match(tree_id):
        raise ArgumentError(_not_a_tree_id().format(value=shown(tree_id)))
    revoked = await ops.links.revoke(tree_id)
    text = _(
        "🔒 Revoked {count} link(s) to the analysis page of <code>{id}</code>.",
        "🔒 Revoked {count} link(s) to the analysis page of <code>{id}</code>.",
        n=revoked,
    )
    await message.answer(text.format(count=revoked, id=html.escape(tree_id)))
    return f"revoked {revoked} links to {tree_id}"


def format_runbooks(runbooks: RunbookSet, title: str) -> str:
    language: Language = "ru" if current_language() == "ru" else "en"
    lines = [title]
    for runbook in sorted(runbooks.runbooks.values(), key=lambda r: r.id):
        line = _("• <code>{id}</code> — {title} ({hypotheses} hypotheses, {checks} checks)")
        lines.append(
            line.format(
                id=html.escape(runbook.id),
                title=html.escape(runbook.title.get(language)),
                hypotheses=len(runbook.hypotheses),
                checks=len(runbook.checks),
            )
        )
    if not runbooks.runbooks:
        lines.append(_("No runbooks are loaded."))
    if runbooks.errors:
        errors = _("<b>Load errors</b> ({count} — these files were skipped):")
        lines.append(errors.format(count=len(runbooks.errors)))
        lines.extend(f"⚠ {html.escape(cut(str(e), 300))}" for e in runbooks.errors)
    else:
        lines.append(_("No load errors."))
    return "\n".join(lines)


async def runbooks_handler(message: Message, ops: Ops) -> str:
    library = ops.runbooks
    title = _("📚 <b>Runbooks</b> ({count}, loaded {when})").format(
        count=len(library.current), when=when(library.loaded_at)
    )
    await answer_long(message, format_runbooks(library.current, title))
    return f"{len(library.current)} runbooks, {len(library.current.errors)} errors"


async def reload_runbooks_handler(message: Message, ops: Ops) -> str:
    before = len(ops.runbooks.current)
    runbooks = await ops.runbooks.reload()
    title = _("🔄 <b>Runbooks reloaded</b>: {count} loaded (before: {before})").format(
        count=len(runbooks), before=before
    )
    await answer_long(message, format_runbooks(runbooks, title))
    return f"reloaded {len(runbooks)} runbooks, {len(runbooks.errors)} errors"


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(trees_handler, Command("trees"))
    router.message.register(tree_handler, Command("tree"))
    router.message.register(revoke_links_handler, Command("revoke_links"))
    router.message.register(runbooks_handler, Command("runbooks"))
    router.message.register(reload_runbooks_handler, Command("reload_runbooks"))
    return router
