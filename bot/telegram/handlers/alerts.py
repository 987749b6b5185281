"""The alert reports' buttons and /alerts, /silences, /silence (bot/telegram/alerts/actions.py).

Thin: it reads the press or the command, asks `AlertActions`, and shows the outcome
(a notice on the button, and a message in the chat when there is one to keep).
"""

from __future__ import annotations

from aiogram import Bot, Router
from aiogram.filters import Command, CommandObject
from aiogram.types import BotCommand, CallbackQuery, Message

from bot.telegram.alerts.actions import AlertActions, Outcome
from bot.telegram.alerts.buttons import AlertCallback
from bot.telegram.language import user_language
from reasoning_core import N_, gettext

#: For the command menu (setMyCommands) and /help.
ALERT_COMMANDS = [
    BotCommand(command="alerts", description=N_("Firing alerts of this chat and their state")),
    BotCommand(command="silences", description=N_("Silences made from this chat")),
    BotCommand(
        command="silence", description=N_("Silence an alert: /silence Name [label=value] 1h")
    ),
]

#: Telegram shows at most 200 characters in a callback's notice.
_NOTICE_CHARS = 200


def create_router(actions: AlertActions) -> Router:
    router = Router(name=__name__)

    async def pressed(query: CallbackQuery, callback_data: AlertCallback, bot: Bot) -> None:
        language = user_language(query.from_user)
        if query.message is None:
            await query.answer(gettext(language, "That alert is not known in this chat."))
            return
        chat_id = query.message.chat.id
        outcome = await _outcome(actions, bot, query, callback_data, language)
        await query.answer(outcome.notice[:_NOTICE_CHARS], show_alert=outcome.message is not None)
        if outcome.message is not None:
            await bot.send_message(chat_id, outcome.message, reply_markup=outcome.keyboard)

    async def alerts_command(message: Message) -> None:
        language = user_language(message.from_user)
        await message.answer(await actions.alerts_text(message.chat.id, language))

    async def silences_command(message: Message) -> None:
        language = user_language(message.from_user)
        text, keyboard = await actions.silences_text(message.chat.id, language)
        await message.answer(text, reply_markup=keyboard)

    async def silence_command(message: Message, command: CommandObject, bot: Bot) -> None:
        if message.from_user is None:
            return
        language = user_language(message.from_user)
        args = (command.args or "").split()
        reply = await actions.silence_typed(
            bot, args=args, chat_id=message.chat.id, user=message.from_user, language=language
        )
        await message.answer(reply)

    router.callback_query.register(pressed, AlertCallback.filter())
    router.message.register(alerts_command, Command("alerts"))
    router.message.register(silences_command, Command("silences"))
    router.message.register(silence_command, Command("silence"))
    return router


async def _outcome(
    actions: AlertActions, bot: Bot, query: CallbackQuery, data: AlertCallback, language: str
) -> Outcome:
    assert query.message is not None
    chat_id, message_id, user = query.message.chat.id, query.message.message_id, query.from_user
    if data.a == "s":
        return await actions.silence(
            bot,
            analysis_id=data.i,
            hours=data.h,
            chat_id=chat_id,
            message_id=message_id,
            user=user,
            language=language,
        )
    if data.a == "k":
        return await actions.acknowledge(
            bot, analysis_id=data.i, chat_id=chat_id, user=user, language=language
        )
    if data.a == "r":
        return await actions.again(
            bot, analysis_id=data.i, chat_id=chat_id, user=user, language=language
        )
    return await actions.expire(
        bot, action_id=data.i, chat_id=chat_id, user=user, language=language
    )
