"""Answers rendered as Telegram HTML: every dynamic part escaped, long replies split.

Telegram accepts at most 4096 characters per message and rejects HTML whose
tags do not balance, so `split_html` cuts at paragraph, then line, then word
boundaries and closes the tags that are open at a cut, reopening them in the
next part.
"""

from __future__ import annotations

import re
from functools import partial
from html import escape as _escape
from html import unescape

from bot.wording import confidence_tag, reply_words
from reasoning_core import UNCERTAINTY_THRESHOLD, Answer

TELEGRAM_LIMIT = 4096

#: Escape text for Telegram HTML; quotes need escaping only inside attributes.
escape = partial(_escape, quote=False)

_TAG = re.compile(r"<(/?)([a-z]+)(?:\s[^>]*)?>")


def render_answer(answer: Answer) -> str:
    """The reply as Telegram HTML: text, then the confidence tag and any uncertainty."""
    if answer.strategy == "clarify" and answer.clarification is not None:
        return f"❓ {escape(answer.text.strip())}"
    words = reply_words(answer.language)
    parts = [escape(answer.text.strip())]
    if answer.assumptions:
        parts.append(
            f"<b>{words['assumptions']}</b>\n"
            + "\n".join(f"• {escape(a)}" for a in answer.assumptions)
        )
    footer = [f"<i>{escape(confidence_tag(answer.confidence, answer.language))}</i>"]
    if answer.confidence < UNCERTAINTY_THRESHOLD and answer.uncertainty_reason:
        unsure = escape(answer.uncertainty_reason.strip())
        footer.append(f"<i>⚠ {words['unsure']}: {unsure}</i>")
    parts.append("\n".join(footer))
    return "\n\n".join(p for p in parts if p)


def split_html(html: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """Split `html` into parts of at most `limit` characters, each with balanced tags."""
    parts: list[str] = []
    reopen = ""
    rest = html
    while rest:
        budget = limit - len(reopen)
        if len(rest) + len(reopen) <= limit and not _open_tags(reopen + rest):
            parts.append(reopen + rest)
            break
        cut = _cut_point(rest, budget - _MAX_CLOSING)
        chunk = reopen + rest[:cut]
        still_open = _open_tags(chunk)
        closing = "".join(f"</{name}>" for name, _ in reversed(still_open))
        parts.append((chunk.rstrip() + closing) if chunk.strip() else chunk + closing)
        reopen = "".join(tag for _, tag in still_open)
        rest = rest[cut:].lstrip("\n")
    return [p for p in parts if _visible(p)]


#: Room kept for the closing tags a cut may need (deeply nested markup is ours, never user text).
_MAX_CLOSING = 64


def _cut_point(text: str, budget: int) -> int:
    """Where to cut at or before `budget`: paragraph, line, space, else outside a tag."""
    if len(text) <= budget:
        return len(text)
    window = text[:budget]
    for sep in ("\n\n", "\n", " "):
        at = window.rfind(sep)
        if at > budget // 3:
            return at + len(sep) if sep != " " else at + 1
    at = budget
    tag_start = window.rfind("<")
    if tag_start > window.rfind(">"):
        at = tag_start  # never cut inside a tag
    entity = window.rfind("&")
    if entity > window.rfind(";") and budget - entity < 10:  # noqa: PLR2004 - longest entity
        at = min(at, entity)
    return max(at, 1)


def _open_tags(html: str) -> list[tuple[str, str]]:
    """Tags opened and not yet closed, outermost first, as (name, opening tag text)."""
    stack: list[tuple[str, str]] = []
    for match in _TAG.finditer(html):
        closing, name = match.group(1), match.group(2)
        if not closing:
            stack.append((name, match.group(0)))
        elif stack and stack[-1][0] == name:
            stack.pop()
    return stack


def _visible(html: str) -> bool:
    return bool(_TAG.sub("", html).strip())


def strip_tags(html: str) -> str:
    """Plain text of our HTML (for the parse-error fallback and the terminal)."""
    return unescape(_TAG.sub("", html))
