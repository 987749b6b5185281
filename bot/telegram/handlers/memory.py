"""/memory, /forget and /project: what the bot remembers for the current project.

Memory is keyed by user, chat and project, so everything here acts for the person
who pressed or typed, in this chat. Buttons carry the id of the user they were
made for: in a group, somebody else's press gets a notice and changes nothing
(and the store deletes only its owner's rows anyway).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware, Router
from aiogram.filters import Command, CommandObject
from aiogram.filters.callback_data import CallbackData
from aiogram.types import (
    BotCommand,
    CallbackQuery,
    InaccessibleMessage,
    InlineKeyboardMarkup,
    Message,
    TelegramObject,
)
from aiogram.utils.i18n import gettext as _
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.telegram.language import user_language
from bot.telegram.replies.rendering import escape
from bot.wording import confidence_tag
from reasoning_core import (
    N_,
    InvalidProjectNameError,
    MemoryEntry,
    MemoryStore,
    ProjectStore,
    gettext,
    shorten,
    validate_project_name,
)

#: Entries shown by /memory (newest first); the message stays one Telegram message.
SHOWN_ENTRIES = 10
_TEXT_LIMIT = 3800

#: For the command menu (setMyCommands) and /help.
MEMORY_COMMANDS = [
    BotCommand(command="memory", description=N_("What I remember for the current project")),
    BotCommand(command="forget", description=N_("Erase everything I remember for the project")),
    BotCommand(command="project", description=N_("Show or set the current project")),
]

NOT_YOURS = N_("These buttons belong to someone else's /memory or /forget.")

#: How /memory names the way an entry was answered (translated where shown).
_STRATEGIES = {
    "quick": N_("quick"),
    "deep": N_("deep"),
    "clarify": N_("clarify"),
    "decline": N_("decline"),
}


class MemoryDelete(CallbackData, prefix="memdel"):
    """Delete one entry (<= 64 bytes: two integers)."""

    entry: int
    owner: int


class ForgetConfirm(CallbackData, prefix="memforget"):
    """Confirm or cancel /forget; `tag` pins the project the question was about."""

    yes: bool
    owner: int
    tag: str


def project_tag(project: str) -> str:
    """8 hex characters standing for a project name in callback data."""
    return hashlib.blake2s(project.encode(), digest_size=4).hexdigest()


# --- rendering ---------------------------------------------------------------------


def _entry_html(number: int, entry: MemoryEntry, language: str) -> str:
    day = entry.created_at.date().isoformat() if entry.created_at else ""
    goal = escape(shorten(entry.goal_summary, 120))
    outcome = escape(shorten(entry.outcome_summary, 160)) or "—"
    strategy = _STRATEGIES.get(entry.strategy, entry.strategy)
    if entry.strategy in _STRATEGIES:
        strategy = gettext(language, strategy)
    tag = escape(f"{strategy}, {confidence_tag(entry.confidence, language)}")
    return f"<b>{number}.</b> <i>{day}</i> {goal}\n    → {outcome} <i>({tag})</i>"


def render_memory(
    project: str, entries: list[MemoryEntry], total: int, owner: int, language: str = "en"
) -> tuple[str, InlineKeyboardMarkup | None]:
    """The /memory message for `project` and its delete buttons (one per entry shown)."""
    name = escape(project)
    if not entries:
        empty = gettext(language, "🧠 I remember nothing for project <b>{name}</b> yet.")
        return empty.format(name=name), None
    title = gettext(language, "🧠 What I remember for project <b>{name}</b> ({total}):")
    lines = [title.format(name=name, total=total)]
    builder = InlineKeyboardBuilder()
    for number, entry in enumerate(entries, start=1):
        line = _entry_html(number, entry, language)
        if entry.id is None or sum(map(len, lines)) + len(line) > _TEXT_LIMIT:
            break
        lines.append(line)
        builder.button(text=f"🗑 {number}", callback_data=MemoryDelete(entry=entry.id, owner=owner))
    if total > len(lines) - 1:
        older = gettext(language, "<i>…and {count} older.</i>")
        lines.append(older.format(count=total - len(lines) + 1))
    lines.append(gettext(language, "Tap 🗑 to delete an entry; /forget erases them all."))
    builder.adjust(5)
    return "\n".join(lines), builder.as_markup()


async def _memory_view(
    memories: MemoryStore, projects: ProjectStore, *, user_id: int, chat_id: int, language: str
) -> tuple[str, InlineKeyboardMarkup | None]:
    project = await projects.get(user_id=user_id, chat_id=chat_id)
    entries = await memories.list(
        user_id=user_id, chat_id=chat_id, project=project, limit=SHOWN_ENTRIES
    )
    total = await memories.count(user_id=user_id, chat_id=chat_id, project=project)
    return render_memory(project, entries, total, user_id, language)


# --- handlers ----------------------------------------------------------------------


async def memory_handler(message: Message, memories: MemoryStore, projects: ProjectStore) -> None:
    if message.from_user is None:
        return
    text, markup = await _memory_view(
        memories,
        projects,
        user_id=message.from_user.id,
        chat_id=message.chat.id,
        language=user_language(message.from_user),
    )
    await message.answer(text, reply_markup=markup)


async def delete_button_handler(
    query: CallbackQuery,
    callback_data: MemoryDelete,
    memories: MemoryStore,
    projects: ProjectStore,
) -> None:
    language = user_language(query.from_user)
    if callback_data.owner != query.from_user.id or query.message is None:
        await query.answer(_(NOT_YOURS))
        return
    deleted = await memories.delete(user_id=query.from_user.id, entry_id=callback_data.entry)
    await query.answer(_("Deleted.") if deleted else _("That entry is already gone."))
    if deleted and not isinstance(query.message, InaccessibleMessage):
        text, markup = await _memory_view(
            memories,
            projects,
            user_id=query.from_user.id,
            chat_id=query.message.chat.id,
            language=language,
        )
        await query.message.edit_text(text, reply_markup=markup)


async def forget_handler(message: Message, memories: MemoryStore, projects: ProjectStore) -> None:
    if message.from_user is None:
        return
    user_id, chat_id = message.from_user.id, message.chat.id
    project = await projects.get(user_id=user_id, chat_id=chat_id)
    total = await memories.count(user_id=user_id, chat_id=chat_id, project=project)
    if total == 0:
        nothing = _("There is nothing to forget for project <b>{name}</b>.")
        await message.answer(nothing.format(name=escape(project)))
        return
    tag = project_tag(project)
    builder = InlineKeyboardBuilder()
    builder.button(
        text=_("🗑 Yes, erase it all"),
        callback_data=ForgetConfirm(yes=True, owner=user_id, tag=tag),
    )
    builder.button(
        text=_("Cancel"), callback_data=ForgetConfirm(yes=False, owner=user_id, tag=tag)
    )
    await message.answer(
        _(
            "Erase all {total} entries I remember for project <b>{name}</b>? "
            "This cannot be undone."
        ).format(total=total, name=escape(project)),
        reply_markup=builder.as_markup(),
    )


async def forget_button_handler(
    query: CallbackQuery,
    callback_data: ForgetConfirm,
    memories: MemoryStore,
    projects: ProjectStore,
) -> None:
    message = query.message
    if callback_data.owner != query.from_user.id or message is None:
        await query.answer(_(NOT_YOURS))
        return
    user_id, chat_id = query.from_user.id, message.chat.id
    project = await projects.get(user_id=user_id, chat_id=chat_id)
    if project_tag(project) != callback_data.tag:
        await query.answer(_("Your project has changed since; send /forget again."))
        return
    if not callback_data.yes:
        await query.answer(_("Kept."))
        text = _("Nothing was erased.")
    else:
        erased = await memories.forget_all(user_id=user_id, chat_id=chat_id, project=project)
        await query.answer(
            _("Erased {count}.").format(count=erased) if erased else _("Nothing left to erase.")
        )
        if not erased:
            return  # pressed twice: the first press already erased and edited the message
        text = _("🧹 Erased {count} entries for project <b>{name}</b>.").format(
            count=erased, name=escape(project)
        )
    if not isinstance(message, InaccessibleMessage):
        await message.edit_text(text, reply_markup=None)


async def project_handler(
    message: Message, command: CommandObject, projects: ProjectStore
) -> None:
    if message.from_user is None:
        return
    user_id, chat_id = message.from_user.id, message.chat.id
    if command.args is None:
        project = await projects.get(user_id=user_id, chat_id=chat_id)
        current = _(
            "📁 Current project: <b>{name}</b>.\n"
            "Set another with <code>/project NAME</code>; <code>/project default</code> "
            "goes back to the default one."
        )
        await message.answer(current.format(name=escape(project)))
        return
    try:
        project = validate_project_name(command.args)
    except InvalidProjectNameError as e:
        bad_name = _("I can't use that project name: {error}.")
        await message.answer(bad_name.format(error=escape(str(e))))
        return
    await projects.set(user_id=user_id, chat_id=chat_id, project=project)
    set_text = _("📁 Project set to <b>{name}</b>. /memory shows what I remember for it.")
    await message.answer(set_text.format(name=escape(project)))


class _Inject(BaseMiddleware):
    """Puts this router's stores into the handler data."""

    def __init__(self, **values: object) -> None:
        self._values = values

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        data.update(self._values)
        return await handler(event, data)


def create_router(*, memories: MemoryStore, projects: ProjectStore) -> Router:
    router = Router(name=__name__)
    inject = _Inject(memories=memories, projects=projects)
    router.message.middleware(inject)
    router.callback_query.middleware(inject)
    router.message.register(memory_handler, Command("memory"))
    router.message.register(forget_handler, Command("forget"))
    router.message.register(project_handler, Command("project"))
    router.callback_query.register(delete_button_handler, MemoryDelete.filter())
    router.callback_query.register(forget_button_handler, ForgetConfirm.filter())
    return router
