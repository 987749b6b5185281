"""Sending a `Reply` in one pass: its picture or parts, the buttons on the last, the file.

Retries after 429 and the plain-text fallback for parse errors happen in the
request middlewares (bot/telegram/session.py), for every call alike; what is left
here is the one refusal a reply can answer by itself: a page link Telegram does
not take (a PUBLIC_URL it refuses) costs the link button, not the reply.
"""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import BufferedInputFile, InlineKeyboardMarkup, Message

from bot.telegram.replies.reply import (
    DEFAULT_MAX_REPLY_MESSAGES,
    File,
    Picture,
    Reply,
    html_reply,
    reply_to,
)
from bot.telegram.replies.report_chart import ReportCharts
from bot.trees.page.links import TreeLinks
from reasoning_core import Answer, report_of

log = logging.getLogger(__name__)


async def send_reply(bot: Bot, chat_id: int, reply: Reply) -> list[Message]:
    """Send `reply` as it was built; the messages Telegram took, in order."""
    if reply.picture is not None:
        return [await _send_picture(bot, chat_id, reply.picture, reply)]
    sent = [await bot.send_message(chat_id, part) for part in reply.parts[:-1]]
    sent.append(await _send_last(bot, chat_id, reply))
    if reply.document is not None:
        sent.append(await bot.send_document(chat_id, _upload(reply.document)))
    return sent


async def send_html(
    bot: Bot,
    chat_id: int,
    html: str,
    *,
    reply_markup: InlineKeyboardMarkup | None = None,
    max_messages: int = DEFAULT_MAX_REPLY_MESSAGES,
    language: str = "en",
) -> list[Message]:
    """Send `html` as at most `max_messages` messages; the keyboard goes on the last one."""
    reply = html_reply(html, buttons=reply_markup, max_messages=max_messages, language=language)
    return await send_reply(bot, chat_id, reply)


async def send_answer(
    bot: Bot,
    chat_id: int,
    answer: Answer,
    *,
    links: TreeLinks | None = None,
    max_messages: int = DEFAULT_MAX_REPLY_MESSAGES,
    charts: ReportCharts | None = None,
) -> list[Message]:
    """Build the answer's reply (its page link first), send it, then a deep report's
    chart (`charts`), which never holds the report back."""
    report = report_of(answer)  # once: the text, the page link and the chart read it
    reply = await reply_to(answer, report, links=links, max_messages=max_messages)
    sent = await send_reply(bot, chat_id, reply)
    if charts is not None:
        photo = await charts.send(bot, chat_id, answer, report)
        if photo is not None:
            sent.append(photo)
    return sent


async def _send_last(bot: Bot, chat_id: int, reply: Reply) -> Message:
    last = reply.parts[-1]
    try:
        return await bot.send_message(chat_id, last, reply_markup=reply.buttons)
    except TelegramBadRequest as e:
        if reply.page_url is None:
            raise
        log.warning("Telegram refused the Open in browser button (check PUBLIC_URL): %s", e)
        return await bot.send_message(chat_id, last, reply_markup=reply.plain_buttons)


async def _send_picture(bot: Bot, chat_id: int, picture: Picture, reply: Reply) -> Message:
    caption = reply.parts[0] if reply.parts else None
    upload = _upload(picture.file)
    if picture.photo:
        return await bot.send_photo(chat_id, upload, caption=caption, reply_markup=reply.buttons)
    return await bot.send_document(chat_id, upload, caption=caption, reply_markup=reply.buttons)


def _upload(file: File) -> BufferedInputFile:
    return BufferedInputFile(file.data, filename=file.filename)
