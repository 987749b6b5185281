"""Sending a tree as a picture in Telegram: a photo, or the SVG as a document when too big.

The caption names the primary cause and its confidence; a "Text view" button
under the picture sends the same tree as text. When Graphviz is missing, fails
or is too slow (`TreePictures.timeout`), or Telegram refuses the upload, one
log line says why and the caller sends the text view instead.
"""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import BufferedInputFile

from bot.replies.rendering import escape
from bot.replies.report_html import labels, text_view_button
from bot.trees.picture import RenderError, TreePictures, fits_telegram_photo
from bot.trees.picture.text import cut, language_of
from reasoning_core.models import Tree

log = logging.getLogger(__name__)

_CAPTION_TITLE = 300


def picture_caption(tree: Tree, language: str) -> str:
    """ "🌳 Primary cause: X (0.86)" as Telegram HTML (well under the 1,024-character limit)."""
    synthesis = tree.synthesis
    if synthesis is None:
        return f"🌳 {escape(cut(tree.task, _CAPTION_TITLE))}"
    words = labels(language)
    head = words["not_established"] if synthesis.not_established else words["primary"]
    title = escape(cut(synthesis.primary.title, _CAPTION_TITLE))
    return f"🌳 <b>{head}:</b> {title} ({synthesis.confidence:.2f})"


async def send_tree_picture(bot: Bot, chat_id: int, tree: Tree, pictures: TreePictures) -> bool:
    """Send the tree's picture; False (and one log line) when the text view is needed."""
    language = language_of(tree.task)
    caption = picture_caption(tree, language)
    markup = text_view_button(tree.id, language)
    try:
        png = await pictures.render(tree, "png", language=language)
        if fits_telegram_photo(png):
            photo = BufferedInputFile(png, filename=f"tree-{tree.id}.png")
            await bot.send_photo(chat_id, photo, caption=caption, reply_markup=markup)
            return True
        svg = await pictures.render(tree, "svg", language=language)
        document = BufferedInputFile(svg, filename=f"tree-{tree.id}.svg")
        await bot.send_document(chat_id, document, caption=caption, reply_markup=markup)
    except (RenderError, TelegramAPIError) as e:
        log.warning("tree %s: picture not sent, text view instead: %s", tree.id, e)
        return False
    return True
