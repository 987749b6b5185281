"""Admin views of analyses and runbooks: /trees [n], /tree ID, /revoke_links ID, /runbooks,
/reload_runbooks."""

from __future__ import annotations

import html
import re

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import Message

from bot.operations.ops import Ops
from bot.telegram.handlers.admin_args import ArgumentError, parse_count, shown, split_args
from bot.telegram.handlers.admin_format import answer_long, cut, when
from reasoning_core.errors import NotFoundError
from reasoning_core.runbooks.loader import RunbookSet
from reasoning_core.tree.render import render_tree_text

TREES_DEFAULT, TREES_MAX = 10, 50
TREE_LINES = 80
_TREE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


async def trees_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    limit = parse_count(command.args, default=TREES_DEFAULT, maximum=TREES_MAX, usage="/trees [n]")
    trees = await ops.trees.list(limit=limit)
    if not trees:
        await message.answer("No analyses yet: deep questions grow trees, and none has run.")
        return "none"
    lines = [f"🌳 <b>Recent analyses</b> ({len(trees)}, newest first; /tree ID shows one)"]
    for t in trees:
        cause = html.escape(cut(t.primary_title, 60)) if t.primary_title else "no primary cause"
        confidence = "" if t.confidence is None else f" · {t.confidence:.2f}"
        lines.append(
            f"• <code>{html.escape(t.id)}</code> · {t.status} · {cause}{confidence} · "
            f"{when(t.created_at)}\n  {html.escape(cut(t.task, 80))}"
        )
    await answer_long(message, "\n".join(lines))
    return f"listed {len(trees)}"


async def tree_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    tree_id, _ = split_args(command.args)
    if not tree_id:
        raise ArgumentError("Which tree? Usage: <code>/tree ID</code> (ids are listed by /trees)")
    if not _TREE_ID.match(tree_id):
        raise ArgumentError(f"“{shown(tree_id)}” is not a tree id (see /trees).")
    try:
        tree = await ops.trees.load(tree_id)
    except NotFoundError:
        raise ArgumentError(
            f"No tree with id <code>{html.escape(tree_id)}</code> (see /trees)."
        ) from None
    header = [f"🌳 <b>{html.escape(cut(tree.task, 200))}</b>", f"Status: {tree.status}"]
    if tree.synthesis is not None:
        s = tree.synthesis
        header.append(f"Primary cause: {html.escape(s.primary.title)} · {s.confidence:.2f}")
    body = "\n".join(render_tree_text(tree, max_lines=TREE_LINES))
    await answer_long(message, "\n".join(header) + f"\n<pre>{html.escape(body)}</pre>")
    return f"shown {tree_id}"


async def revoke_links_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    """End every live link to one analysis page (a leaked link stops working at once)."""
    tree_id, _ = split_args(command.args)
    if not tree_id:
        raise ArgumentError(
            "Which tree? Usage: <code>/revoke_links ID</code> (ids are listed by /trees)"
        )
    if not _TREE_ID.match(tree_id):
        raise ArgumentError(f"“{shown(tree_id)}” is not a tree id (see /trees).")
    revoked = await ops.links.revoke(tree_id)
    shown_id = html.escape(tree_id)
    await message.answer(
        f"🔒 Revoked {revoked} link(s) to the analysis page of <code>{shown_id}</code>."
    )
    return f"revoked {revoked} links to {tree_id}"


def format_runbooks(runbooks: RunbookSet, title: str) -> str:
    lines = [title]
    for runbook in sorted(runbooks.runbooks.values(), key=lambda r: r.id):
        lines.append(
            f"• <code>{html.escape(runbook.id)}</code> — {html.escape(runbook.title.en)} "
            f"({len(runbook.hypotheses)} hypotheses, {len(runbook.checks)} checks)"
        )
    if not runbooks.runbooks:
        lines.append("No runbooks are loaded.")
    if runbooks.errors:
        lines.append(f"<b>Load errors</b> ({len(runbooks.errors)} — these files were skipped):")
        lines.extend(f"⚠ {html.escape(cut(str(e), 300))}" for e in runbooks.errors)
    else:
        lines.append("No load errors.")
    return "\n".join(lines)


async def runbooks_handler(message: Message, ops: Ops) -> str:
    library = ops.runbooks
    title = f"📚 <b>Runbooks</b> ({len(library.current)}, loaded {when(library.loaded_at)})"
    await answer_long(message, format_runbooks(library.current, title))
    return f"{len(library.current)} runbooks, {len(library.current.errors)} errors"


async def reload_runbooks_handler(message: Message, ops: Ops) -> str:
    before = len(ops.runbooks.current)
    runbooks = await ops.runbooks.reload()
    title = f"🔄 <b>Runbooks reloaded</b>: {len(runbooks)} loaded (before: {before})"
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
