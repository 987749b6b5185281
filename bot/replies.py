"""Sending answers: rendered to HTML, split to Telegram's limit, keyboards on the last part.

One answer is at most `max_messages` Telegram messages (MAX_REPLY_MESSAGES): a
longer one is cut there, the last message says so, and the whole answer follows
as a plain-text document, answer.txt — never a burst of dozens of messages.
"""

from __future__ import annotations

from aiogram import Bot
from aiogram.types import BufferedInputFile, InlineKeyboardMarkup, Message

from bot.keyboards import clarification_keyboard
from bot.rendering import TELEGRAM_LIMIT, escape, render_answer, split_html, strip_tags
from bot.report_html import render_report, tree_button
from reasoning_core.models import Answer
from reasoning_core.tree.report import report_of

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
    request middlewares (bot/telegram_session.py), for every call alike.
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
    bot: Bot, chat_id: int, answer: Answer, *, max_messages: int = DEFAULT_MAX_REPLY_MESSAGES
) -> list[Message]:
    """Clarifications get their option buttons, deep reports the tree button."""
    language = answer.decision.language if answer.decision else "en"
    report = report_of(answer)
    markup = None
    if report is not None:
        markup = tree_button(answer.tree_id, language) if answer.tree_id else None
        html = render_report(report, answer, language)
    else:
        if answer.clarification is not None:
            markup = clarification_keyboard(answer.clarification, language)
        html = render_answer(answer)
    return await send_html(
        bot, chat_id, html, reply_markup=markup, max_messages=max_messages, language=language
    )
