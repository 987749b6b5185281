"""/start, /help and /new."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command, CommandStart
from aiogram.types import BotCommand, Message

from bot.telegram.handlers.admin import ADMIN_HELP
from bot.telegram.handlers.memory import MEMORY_COMMANDS
from bot.telegram.handlers.usage import USAGE_COMMAND
from bot.telegram.language import pick, user_language
from reasoning_core.service import ReasoningService

COMMANDS = [
    BotCommand(command="start", description="What whytree does"),
    BotCommand(command="help", description="How to ask and what the marks mean"),
    BotCommand(command="new", description="Start a new session (forget the recent context)"),
    BotCommand(command="cancel", description="Drop a pending clarifying question"),
    *MEMORY_COMMANDS,
    USAGE_COMMAND,
]

#: The command menu for Telegram apps set to Russian (setMyCommands with language_code "ru").
_RUSSIAN_DESCRIPTIONS = {
    "start": "Что умеет whytree",
    "help": "Как спрашивать и что значат отметки",
    "new": "Начать новую сессию (забыть недавний контекст)",
    "cancel": "Отменить уточняющий вопрос",
    "memory": "Что я помню по текущему проекту",
    "forget": "Стереть всё, что я помню по проекту",
    "project": "Показать или сменить текущий проект",
    "usage": "Расход токенов и дневной бюджет",
}
RUSSIAN_COMMANDS = [
    BotCommand(command=c.command, description=_RUSSIAN_DESCRIPTIONS.get(c.command, c.description))
    for c in COMMANDS
]

START_TEXT = (
    "👋 I'm <b>whytree</b>. Ask me anything — for incident questions like "
    "<i>why did traffic drop on cell 12345 since Monday?</i> I investigate and tell you "
    "how sure I am.\n\nSee /help for details."
)
_START = {
    "en": START_TEXT,
    "ru": "👋 Я <b>whytree</b>. Спрашивайте что угодно — на вопросы об инцидентах вроде "
    "<i>почему упал трафик на соте 12345 с понедельника?</i> я провожу разбор и говорю, "
    "насколько уверен.\n\nПодробности — в /help.",
}

HELP_TEXT = (
    "<b>How to use whytree</b>\n"
    "• Just type your question. In groups, mention me or reply to my message.\n"
    "• Every answer ends with a confidence tag: 🟢 high (≥ 0.8), 🟡 medium (≥ 0.5), "
    "🔴 low — and says what I'm unsure about when confidence is below 0.7.\n"
    "• One question at a time per chat.\n\n"
    "<b>Commands</b>\n" + "\n".join(f"/{c.command} — {c.description}" for c in COMMANDS)
)
_HELP = {
    "en": HELP_TEXT,
    "ru": "<b>Как пользоваться whytree</b>\n"
    "• Просто напишите вопрос. В группах упомяните меня или ответьте на моё сообщение.\n"
    "• Каждый ответ заканчивается отметкой уверенности: 🟢 высокая (≥ 0.8), "
    "🟡 средняя (≥ 0.5), 🔴 низкая — а когда уверенность ниже 0.7, я говорю, в чём "
    "не уверен.\n"
    "• В одном чате — один вопрос за раз.\n\n"
    "<b>Команды</b>\n" + "\n".join(f"/{c.command} — {c.description}" for c in RUSSIAN_COMMANDS),
}
_NEW = {
    "en": "🆕 New session started: I won't use our earlier messages as context.",
    "ru": "🆕 Новая сессия: прежние сообщения я больше не учитываю как контекст.",
}


async def start_handler(message: Message) -> None:
    await message.answer(pick(_START, user_language(message.from_user)))


async def help_handler(message: Message, is_admin: bool = False) -> None:
    text = pick(_HELP, user_language(message.from_user))
    await message.answer(text + (ADMIN_HELP if is_admin else ""))


async def new_session_handler(message: Message, service: ReasoningService) -> None:
    if message.from_user is None:
        return
    await service.new_session(user_id=message.from_user.id, chat_id=message.chat.id)
    await message.answer(pick(_NEW, user_language(message.from_user)))


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(start_handler, CommandStart())
    router.message.register(help_handler, Command("help"))
    router.message.register(new_session_handler, Command("new"))
    return router
