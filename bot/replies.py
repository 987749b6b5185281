"""Sending answers: rendered to HTML, split to Telegram's limit, keyboards on the last part."""

from __future__ import annotations

from aiogram import Bot
from aiogram.types import InlineKeyboardMarkup, Message

from bot.keyboards import clarification_keyboard
from bot.rendering import render_answer, split_html
from bot.report_html import render_report, tree_button
from reasoning_core.models import Answer
from reasoning_core.tree.report import report_of


async def send_html(
    bot: Bot, chat_id: int, html: str, *, reply_markup: InlineKeyboardMarkup | None = None
) -> list[Message]:
    """Send `html` as one or more messages; the keyboard goes on the last part.

    Retries after 429 and the plain-text fallback for parse errors happen in the
    request middlewares (bot/telegram_session.py), for every call alike.
    """
    parts = split_html(html)
    sent = []
    for index, part in enumerate(parts):
        markup = reply_markup if index == len(parts) - 1 else None
        sent.append(await bot.send_message(chat_id, part, reply_markup=markup))
    return sent


async def send_answer(bot: Bot, chat_id: int, answer: Answer) -> list[Message]:
    """Clarifications get their option buttons, deep reports the tree button."""
    language = answer.language
    report = report_of(answer)
    if report is not None:
        markup = tree_button(answer.tree_id, language) if answer.tree_id else None
        return await send_html(
            bot, chat_id, render_report(report, answer, language), reply_markup=markup
        )
    markup = None
    if answer.clarification is not None:
        markup = clarification_keyboard(answer.clarification, language)
    return await send_html(bot, chat_id, render_answer(answer), reply_markup=markup)
