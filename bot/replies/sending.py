"""Sending answers: rendered to HTML, split to Telegram's limit, keyboards on the last part.

One answer is at most `max_messages` Telegram messages (MAX_REPLY_MESSAGES): a
longer one is cut there, the last message says so, and the whole answer follows
as a plain-text document, answer.txt — never a burst of dozens of messages.
"""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import BufferedInputFile, InlineKeyboardMarkup, Message

from bot.replies.rendering import TELEGRAM_LIMIT, escape, render_answer, split_html, strip_tags
from bot.replies.report_html import render_report, tree_button
from bot.telegram.keyboards import clarification_keyboard
from bot.trees.page.links import TreeLinks
from reasoning_core.errors import StoreError
from reasoning_core.models import Answer
from reasoning_core.tree.report import report_of

log = logging.getLogger(__name__)

DEFAULT_MAX_REPLY_MESSAGES = 3
ANSWER_FILENAME = "answer.txt"
_CUT_NOTE = {
    "en": "✂️ The answer is longer than {n} messages: all of it is in the file below, {file}.",
    "ru": "✂️ Ответ длиннее {n} сообщений: целиком он в файле ниже, {file}.",
}
_NOTE_ROOM = 200  # characters kept free in every part for the note


async def send_html(
    bot: Bot,
    chat_id: int,
    html: str,
    *,
    reply_markup: InlineKeyboardMarkup | None = None,
    max_messages: int = DEFAULT_MAX_REPLY_MESSAGES,
    language: str = "en",
) -> list[Message]:
    """Send `html` as at most `max_messages` messages; the keyboard goes on the last one.

    Retries after 429 and the plain-text fallback for parse errors happen in the
    request middlewares (bot/telegram/session.py), for every call alike.
    """
    parts = split_html(html)
    cut = len(parts) > max_messages
    if cut:
        parts = split_html(html, TELEGRAM_LIMIT - _NOTE_ROOM)[:max_messages]
        note = _CUT_NOTE["ru" if language == "ru" else "en"]
        parts[-1] += "\n\n<i>" + escape(note.format(n=max_messages, file=ANSWER_FILENAME))
        parts[-1] += "</i>"
    sent = []
    for index, part in enumerate(parts):
        markup = reply_markup if index == len(parts) - 1 else None
        sent.append(await bot.send_message(chat_id, part, reply_markup=markup))
    if cut:
        document = BufferedInputFile(strip_tags(html).encode("utf-8"), filename=ANSWER_FILENAME)
        sent.append(await bot.send_document(chat_id, document))
    return sent


async def send_answer(
    bot: Bot,
    chat_id: int,
    answer: Answer,
    *,
    links: TreeLinks | None = None,
    max_messages: int = DEFAULT_MAX_REPLY_MESSAGES,
) -> list[Message]:
    """Clarifications get their option buttons, deep reports the tree button (and, with
    `links` enabled, an "Open in browser" link to the analysis page)."""
    language = answer.language
    report = report_of(answer)
    if report is not None:
        html = render_report(report, answer, language)
        if not answer.tree_id:
            return await send_html(
                bot, chat_id, html, max_messages=max_messages, language=language
            )
        url = await _page_link(links, answer.tree_id)
        return await _send_report(
            bot, chat_id, html, answer.tree_id, language=language, url=url,
            max_messages=max_messages,
        )  # fmt: skip
    markup = None
    if answer.clarification is not None:
        markup = clarification_keyboard(answer.clarification, language)
    return await send_html(
        bot, chat_id, render_answer(answer), reply_markup=markup, max_messages=max_messages,
        language=language,
    )  # fmt: skip


async def _send_report(
    bot: Bot,
    chat_id: int,
    html: str,
    tree_id: str,
    *,
    language: str,
    url: str | None,
    max_messages: int,
) -> list[Message]:
    """The report with its buttons. Should Telegram refuse the link button (a PUBLIC_URL it
    does not take), the report's last part goes again with the tree button alone."""
    try:
        return await send_html(
            bot, chat_id, html, reply_markup=tree_button(tree_id, language, url),
            max_messages=max_messages, language=language,
        )  # fmt: skip
    except TelegramBadRequest as e:
        if url is None:
            raise
        log.warning("Telegram refused the Open in browser button (check PUBLIC_URL): %s", e)
        last = split_html(html)[-1]
        return [await bot.send_message(chat_id, last, reply_markup=tree_button(tree_id, language))]


async def _page_link(links: TreeLinks | None, tree_id: str) -> str | None:
    """A new link to the tree's page, or None (no links, or the link could not be kept)."""
    if links is None or not links.enabled:
        return None
    try:
        return await links.create(tree_id)
    except StoreError as e:
        log.warning("no analysis link for tree %s (report sent without it): %s", tree_id, e)
        return None
