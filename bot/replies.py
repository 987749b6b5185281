"""Sending answers: rendered to HTML, split to Telegram's limit, keyboards on the last part."""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import InlineKeyboardMarkup, Message

from bot.keyboards import clarification_keyboard
from bot.rendering import render_answer, split_html
from bot.report_html import render_report, tree_button
from bot.tree_page.links import TreeLinks
from reasoning_core.errors import StoreError
from reasoning_core.models import Answer
from reasoning_core.tree.report import report_of

log = logging.getLogger(__name__)


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


async def send_answer(
    bot: Bot, chat_id: int, answer: Answer, *, links: TreeLinks | None = None
) -> list[Message]:
    """Clarifications get their option buttons, deep reports the tree button (and, with
    `links` enabled, an "Open in browser" link to the analysis page)."""
    language = answer.decision.language if answer.decision else "en"
    report = report_of(answer)
    if report is not None:
        html = render_report(report, answer, language)
        if not answer.tree_id:
            return await send_html(bot, chat_id, html)
        return await _send_report(
            bot, chat_id, html, answer.tree_id, language=language, links=links
        )
    markup = None
    if answer.clarification is not None:
        markup = clarification_keyboard(answer.clarification, language)
    return await send_html(bot, chat_id, render_answer(answer), reply_markup=markup)


async def _send_report(
    bot: Bot, chat_id: int, html: str, tree_id: str, *, language: str, links: TreeLinks | None
) -> list[Message]:
    """The report with its buttons. Should Telegram refuse the link button (a PUBLIC_URL it
    does not take), the report's last part goes again with the tree button alone."""
    url = await _page_link(links, tree_id)
    try:
        return await send_html(
            bot, chat_id, html, reply_markup=tree_button(tree_id, language, url)
        )
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
