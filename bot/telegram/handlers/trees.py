"""The report's tree button (a picture of the tree) and the text view with its pages.

Both answer only the tree's owner: anyone else gets "not available", whether or
not the tree exists.
"""

from __future__ import annotations

from aiogram import Bot, Router
from aiogram.types import CallbackQuery

from bot.telegram.replies.report_html import TreeCallback, TreePictureCallback, tree_page
from bot.telegram.replies.tree_photo import send_tree_picture
from bot.trees.picture import TreePictures
from reasoning_core import ReasoningService, render_tree_text

NOT_FOUND = "That reasoning tree is not available."


async def tree_picture_handler(
    query: CallbackQuery,
    callback_data: TreePictureCallback,
    bot: Bot,
    service: ReasoningService,
    pictures: TreePictures,
) -> None:
    tree = await service.tree(callback_data.tid, user_id=query.from_user.id)
    if tree is None or query.message is None:
        await query.answer(NOT_FOUND)
        return
    await query.answer()
    chat_id = query.message.chat.id
    if not await send_tree_picture(bot, chat_id, tree, pictures):
        html, markup = tree_page(tree.id, render_tree_text(tree), 0)
        await bot.send_message(chat_id, html, reply_markup=markup)


async def tree_text_handler(
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
        await bot.send_message(chat_id, html, reply_markup=markup)  # a new message
    else:
        await bot.edit_message_text(
            html, chat_id=chat_id, message_id=query.message.message_id, reply_markup=markup
        )


def create_router() -> Router:
    router = Router(name=__name__)
    router.callback_query.register(tree_picture_handler, TreePictureCallback.filter())
    router.callback_query.register(tree_text_handler, TreeCallback.filter())
    return router
