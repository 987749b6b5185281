"""/start, /help and /new."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command, CommandStart
from aiogram.types import BotCommand, Message
from aiogram.utils.i18n import gettext as _

from bot.telegram.handlers.admin import admin_help
from bot.telegram.handlers.alerts import ALERT_COMMANDS
from bot.telegram.handlers.memory import MEMORY_COMMANDS
from bot.telegram.handlers.usage import USAGE_COMMAND
from reasoning_core import N_, ReasoningService, gettext

COMMANDS = [
    BotCommand(command="start", description=N_("What whytree does")),
    BotCommand(command="help", description=N_("How to ask and what the marks mean")),
    BotCommand(command="new", description=N_("Start a new session (forget the recent context)")),
    BotCommand(command="cancel", description=N_("Drop a pending clarifying question")),
    *MEMORY_COMMANDS,
    USAGE_COMMAND,
    *ALERT_COMMANDS,
]

#: The command menu for Telegram apps set to Russian (setMyCommands with language_code "ru").
RUSSIAN_COMMANDS = [
    BotCommand(command=c.command, description=gettext("ru", c.description)) for c in COMMANDS
]

START_TEXT = N_(
    "👋 I'm <b>whytree</b>. Ask me anything — for incident questions like "
    "<i>why did traffic drop on cell 12345 since Monday?</i> I investigate and tell you "
    "how sure I am.\n\nSee /help for details."
)
_HELP_HEAD = N_(
    "<b>How to use whytree</b>\n"
    "• Just type your question. In groups, mention me or reply to my message.\n"
    "• Every answer ends with a confidence tag: 🟢 high (≥ 0.8), 🟡 medium (≥ 0.5), "
    "🔴 low — and says what I'm unsure about when confidence is below 0.7.\n"
    "• One question at a time per chat.\n\n"
    "<b>Commands</b>\n"
)


def help_text() -> str:
    """/help in the update's language (the command list included)."""
    commands = (f"/{c.command} — {_(c.description)}" for c in COMMANDS)
    return _(_HELP_HEAD) + "\n".join(commands)


HELP_TEXT = _HELP_HEAD + "\n".join(f"/{c.command} — {c.description}" for c in COMMANDS)


async def start_handler(message: Message) -> None:
    await message.answer(_(START_TEXT))


async def help_handler(message: Message, is_admin: bool = False) -> None:
    await message.answer(help_text() + (admin_help() if is_admin else ""))


async def new_session_handler(message: Message, service: ReasoningService) -> None:
    if message.from_user is None:
        return
    await service.new_session(user_id=message.from_user.id, chat_id=message.chat.id)
    await message.answer(_("🆕 New session started: I won't use our earlier messages as context."))


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(start_handler, CommandStart())
    router.message.register(help_handler, Command("help"))
    router.message.register(new_session_handler, Command("new"))
    return router
