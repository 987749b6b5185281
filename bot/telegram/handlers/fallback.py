"""Everything that is not a question we can answer gets a clear reply (or, in groups, silence)."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.types import Message
from aiogram.utils.i18n import gettext as _

_private = F.chat.type == "private"


async def edited_message_handler(message: Message) -> None:
    await message.reply(
        _(
            "I saw you edited this message. I answer new messages only — please send the "
            "corrected question again."
        )
    )


async def unknown_command_handler(message: Message) -> None:
    await message.reply(_("I don't know that command. See /help for what I can do."))


async def unsupported_content_handler(message: Message) -> None:
    await message.reply(
        _(
            "I can only read text for now — please type your question "
            "(stickers, photos, files and voice messages are not supported yet)."
        )
    )


def create_router() -> Router:
    router = Router(name=__name__)
    router.edited_message.register(edited_message_handler, _private)
    router.message.register(unknown_command_handler, _private, F.text.startswith("/"))
    router.message.register(unsupported_content_handler, _private)
    return router
