"""A tree as a picture reply in Telegram: a photo, or the SVG as a document when too big.

The caption names the primary cause and its confidence; a "Text view" button
under the picture sends the same tree as text. When Graphviz is missing, fails
or is too slow (`TreePictures.timeout`), or Telegram refuses the upload, one
log line says why and the caller sends the text view instead.
"""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError

from bot.telegram.replies.rendering import escape
from bot.telegram.replies.reply import File, Picture, Reply
from bot.telegram.replies.report_html import labels, text_view_button
from bot.telegram.replies.sending import send_reply
from bot.trees.picture import RenderError, TreePictures, fits_telegram_photo
from bot.trees.picture.text import cut, language_of
from reasoning_core import Tree

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


async def tree_picture_reply(tree: Tree, pictures: TreePictures) -> Reply:
    """The tree's picture as a reply: a PNG photo, or the SVG as a document when the PNG is
    too big for Telegram; raises `RenderError` when Graphviz cannot draw it."""
    language = language_of(tree.task)
    png = await pictures.render(tree, "png", language=language)
    if fits_telegram_photo(png):
        picture = Picture(file=File(png, f"tree-{tree.id}.png"), photo=True)
    else:
        svg = await pictures.render(tree, "svg", language=language)
        picture = Picture(file=File(svg, f"tree-{tree.id}.svg"), photo=False)
    return Reply(
        parts=(picture_caption(tree, language),),
        buttons=text_view_button(tree.id, language),
        picture=picture,
    )


async def send_tree_picture(bot: Bot, chat_id: int, tree: Tree, pictures: TreePictures) -> bool:
    """Send the tree's picture; False (and one log line) when the text view is needed."""
    try:
        await send_reply(bot, chat_id, await tree_picture_reply(tree, pictures))
    except (RenderError, TelegramAPIError) as e:
        log.warning("tree %s: picture not sent, text view instead: %s", tree.id, e)
        return False
    return True
