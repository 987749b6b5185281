"""Everything that is not a question we can answer gets a clear reply (or, in groups, silence)."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.types import Message

from bot.telegram.language import message_language, pick, user_language

_private = F.chat.type == "private"

_EDITED = {
    "en": "I saw you edited this message. I answer new messages only — please send the "
    "corrected question again.",
    "ru": "Вижу, вы изменили сообщение. Я отвечаю только на новые сообщения — пришлите "
    "исправленный вопрос ещё раз.",
}
_UNKNOWN_COMMAND = {
    "en": "I don't know that command. See /help for what I can do.",
    "ru": "Такой команды я не знаю. Что я умею — в /help.",
}
_UNSUPPORTED = {
    "en": "I can only read text for now — please type your question "
    "(stickers, photos, files and voice messages are not supported yet).",
    "ru": "Пока я читаю только текст — напишите вопрос словами "
    "(стикеры, фото, файлы и голосовые сообщения пока не поддерживаются).",
}


async def edited_message_handler(message: Message) -> None:
    language = message_language(message.text, message.from_user)
    await message.reply(pick(_EDITED, language))


async def unknown_command_handler(message: Message) -> None:
    await message.reply(pick(_UNKNOWN_COMMAND, user_language(message.from_user)))


async def unsupported_content_handler(message: Message) -> None:
    language = message_language(message.caption, message.from_user)
    await message.reply(pick(_UNSUPPORTED, language))


def create_router() -> Router:
    router = Router(name=__name__)
    router.edited_message.register(edited_message_handler, _private)
    router.message.register(unknown_command_handler, _private, F.text.startswith("/"))
    router.message.register(unsupported_content_handler, _private)
    return router
