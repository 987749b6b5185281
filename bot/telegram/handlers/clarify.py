"""Clarifying questions: option buttons, "type my own answer", and /cancel."""

from __future__ import annotations

import logging

from aiogram import Bot, Router
from aiogram.exceptions import TelegramAPIError
from aiogram.filters import Command
from aiogram.types import CallbackQuery, Message
from aiogram.utils.i18n import gettext as _

from bot.telegram.keyboards import OWN_ANSWER, ClarifyCallback
from bot.telegram.language import user_language
from bot.telegram.middlewares.one_question import ChatLocks, busy_text
from bot.telegram.replies.conversation import run_and_reply
from bot.telegram.replies.report_chart import ReportCharts
from bot.trees.page.links import TreeLinks
from reasoning_core import N_, Question, ReasoningService, gettext

log = logging.getLogger(__name__)

#: The notice for a button whose question is not open, by the question's state.
NOTICES = {
    "foreign": N_("This question was asked to someone else."),
    "expired": N_("This question has expired — please ask again."),
    "unknown": N_("This button is no longer valid."),
    "stale": N_("That question was already answered."),
}
TYPE_OWN = N_("Type your answer as a message.")


async def clarify_button_handler(
    query: CallbackQuery,
    callback_data: ClarifyCallback,
    bot: Bot,
    service: ReasoningService,
    chat_locks: ChatLocks,
    *,
    max_reply_messages: int,
    tree_links: TreeLinks | None = None,
    report_charts: ReportCharts | None = None,
    stream_replies: bool = True,
) -> None:
    check = await service.check_button(
        callback_data.cid,
        user_id=query.from_user.id,
        index=callback_data.q,
        option=callback_data.o,
    )
    language = check.language or user_language(query.from_user)
    if check.state != "open":
        await query.answer(gettext(language, NOTICES[check.state]))
        return
    if callback_data.o == OWN_ANSWER or check.option is None or query.message is None:
        await query.answer(gettext(language, TYPE_OWN))
        return
    chat_id = query.message.chat.id
    async with chat_locks.claim(chat_id) as claimed:
        if not claimed:
            await query.answer(busy_text(check.language or "en"))
            return
        await query.answer(f"→ {check.option}")
        await _remove_keyboard(bot, chat_id, query.message.message_id)
        question = Question(text=check.option, user_id=query.from_user.id, chat_id=chat_id)
        await run_and_reply(
            bot,
            service,
            question,
            links=tree_links,
            max_messages=max_reply_messages,
            charts=report_charts,
            stream=stream_replies,
        )


async def _remove_keyboard(bot: Bot, chat_id: int, message_id: int) -> None:
    try:
        await bot.edit_message_reply_markup(
            chat_id=chat_id, message_id=message_id, reply_markup=None
        )
    except TelegramAPIError as e:  # the old keyboard staying visible is harmless
        log.warning("could not remove the clarification keyboard: %s", e)


async def unknown_button_handler(query: CallbackQuery) -> None:
    """Forged, malformed or outdated callback data: a notice, nothing else."""
    await query.answer(_(NOTICES["unknown"]))


async def cancel_handler(message: Message, service: ReasoningService) -> None:
    if message.from_user is None:
        return
    cancelled = await service.cancel_clarification(
        user_id=message.from_user.id, chat_id=message.chat.id
    )
    if cancelled:
        await message.answer(_("Cancelled: your next message starts a new question."))
    else:
        await message.answer(_("There is no pending question to cancel."))


def create_router() -> Router:
    router = Router(name=__name__)
    router.callback_query.register(clarify_button_handler, ClarifyCallback.filter())
    router.message.register(cancel_handler, Command("cancel"))
    return router


def create_fallback_router() -> Router:
    """Registered last: catches callback data no other handler understood."""
    router = Router(name=f"{__name__}.fallback")
    router.callback_query.register(unknown_button_handler)
    return router
