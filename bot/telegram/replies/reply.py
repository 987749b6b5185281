"""A reply, decided before anything is sent: its HTML parts, buttons, page link and picture.

Building a `Reply` is pure (`html_reply`, `answer_reply`): rendering, splitting to
Telegram's limit, the keyboard. The one step that needs I/O, the link to a deep
report's analysis page (a row written in PostgreSQL), happens in `reply_to` before
the reply is complete, never between two sends. bot/telegram/replies/sending.py then sends a
`Reply` in one pass.

One answer is at most `max_messages` Telegram messages (MAX_REPLY_MESSAGES): a
longer one is cut there, the last message says so, and the whole answer follows
as a plain-text document, answer.txt — never a burst of dozens of messages.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from aiogram.types import InlineKeyboardMarkup

from bot.telegram.keyboards import clarification_keyboard
from bot.telegram.replies.rendering import (
    TELEGRAM_LIMIT,
    escape,
    render_answer,
    split_html,
    strip_tags,
)
from bot.telegram.replies.report_html import render_report, tree_button
from bot.trees.page.links import TreeLinks
from reasoning_core import Answer, Report, StoreError, gettext, report_of

log = logging.getLogger(__name__)

DEFAULT_MAX_REPLY_MESSAGES = 3
ANSWER_FILENAME = "answer.txt"
_NOTE_ROOM = 200  # characters kept free in every part for the note


@dataclass(frozen=True, slots=True)
class File:
    """Bytes sent as a Telegram upload."""

    data: bytes
    filename: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Picture:
    """A picture with the reply's only part as its caption: a photo, or a document when
    it is too big for one."""

    file: File
    photo: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """Everything one reply sends, in order: `parts` (Telegram HTML, each within the
    limit; with a `picture`, its caption), `buttons` on the last part, then `document`.

    `page_url` is the analysis page's link, already among the buttons; should Telegram
    refuse it (a PUBLIC_URL it does not take), the last part goes with `plain_buttons`.
    """

    parts: tuple[str, ...]
    buttons: InlineKeyboardMarkup | None = None
    page_url: str | None = None
    plain_buttons: InlineKeyboardMarkup | None = None
    document: File | None = None
    picture: Picture | None = None


def html_reply(
    html: str,
    *,
    buttons: InlineKeyboardMarkup | None = None,
    max_messages: int = DEFAULT_MAX_REPLY_MESSAGES,
    language: str = "en",
) -> Reply:
    """`html` as at most `max_messages` parts (the keyboard goes on the last one); what is
    cut off follows whole as answer.txt."""
    parts = split_html(html)
    if len(parts) <= max_messages:
        return Reply(parts=tuple(parts), buttons=buttons)
    parts = split_html(html, TELEGRAM_LIMIT - _NOTE_ROOM)[:max_messages]
    note = gettext(
        language,
        "✂️ The answer is longer than {n} messages: all of it is in the file below, {file}.",
    )
    parts[-1] += "\n\n<i>" + escape(note.format(n=max_messages, file=ANSWER_FILENAME))
    parts[-1] += "</i>"
    document = File(strip_tags(html).encode("utf-8"), ANSWER_FILENAME)
    return Reply(parts=tuple(parts), buttons=buttons, document=document)


def answer_reply(
    answer: Answer,
    *,
    page_url: str | None = None,
    max_messages: int = DEFAULT_MAX_REPLY_MESSAGES,
) -> Reply:
    """Clarifications get their option buttons, deep reports the tree button (and, with
    `page_url`, an "Open in browser" link to the analysis page)."""
    return report_reply(answer, report_of(answer), page_url=page_url, max_messages=max_messages)


def report_reply(
    answer: Answer,
    report: Report | None,
    *,
    page_url: str | None = None,
    max_messages: int = DEFAULT_MAX_REPLY_MESSAGES,
) -> Reply:
    """`answer_reply` with the answer's report built already (`report_of(answer)`: once
    per reply, for its text, its page link and its chart)."""
    language = answer.language
    if report is not None:
        html = render_report(report, answer, language)
        if not answer.tree_id:
            return html_reply(html, max_messages=max_messages, language=language)
        reply = html_reply(
            html,
            buttons=tree_button(answer.tree_id, language, page_url),
            max_messages=max_messages,
            language=language,
        )
        if page_url is None:
            return reply
        plain = tree_button(answer.tree_id, language)
        return Reply(
            parts=reply.parts,
            buttons=reply.buttons,
            page_url=page_url,
            plain_buttons=plain,
            document=reply.document,
        )
    markup = None
    if answer.clarification is not None:
        markup = clarification_keyboard(answer.clarification, language)
    return html_reply(
        render_answer(answer), buttons=markup, max_messages=max_messages, language=language
    )


async def reply_to(
    answer: Answer,
    report: Report | None,
    *,
    links: TreeLinks | None = None,
    max_messages: int = DEFAULT_MAX_REPLY_MESSAGES,
) -> Reply:
    """The answer's whole reply, its page link included (taken now, before any send);
    `report`: `report_of(answer)`."""
    url = None
    if answer.tree_id and report is not None:
        url = await page_link(links, answer.tree_id)
    return report_reply(answer, report, page_url=url, max_messages=max_messages)


async def page_link(links: TreeLinks | None, tree_id: str) -> str | None:
    """A new link to the tree's page, or None (no links, or the link could not be kept)."""
    if links is None or not links.enabled:
        return None
    try:
        return await links.create(tree_id)
    except StoreError as e:
        log.warning("no analysis link for tree %s (report sent without it): %s", tree_id, e)
        return None
