"""The "Show reasoning tree" button and its pages."""

from __future__ import annotations

from aiogram import Bot, Router
from aiogram.types import CallbackQuery

from bot.report_html import TreeCallback, tree_page
from reasoning_core.service import ReasoningService

NOT_FOUND = "That reasoning tree is not available."


async def tree_button_handler(
    query: CallbackQuery, callback_data: TreeCallback, bot: Bot, service: ReasoningService
) -> None:
    lines = await service.tree_lines(callback_data.tid, user_id=query.from_user.id)
    if lines is None or query.message is None:
        await query.answer(NOT_FOUND)
        return
    await query.answer()
    html, markup = tree_page(callback_data.tid, lines, callback_data.p)
    chat_id = query.message.chat.id
    if not callback_data.e:
        await bot.send_message(chat_id, html, reply_markup=markup)  # under the report
    else:
        await bot.edit_message_text(
            html, chat_id=chat_id, message_id=query.message.message_id, reply_markup=markup
        )


def create_router() -> Router:
    router = Router(name=__name__)
    router.callback_query.register(tree_button_handler, TreeCallback.filter())
    return router
