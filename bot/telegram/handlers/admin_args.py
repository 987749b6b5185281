"""Parsing admin command arguments; a bad argument raises `ArgumentError` with the reply
(in the update's language: run inside a handler)."""

from __future__ import annotations

import html

from aiogram.utils.i18n import gettext as _

#: PostgreSQL bigint; Telegram ids are far below it.
_MAX_ID = 2**63 - 1
_SHOWN = 24  # how much of a bad argument to echo back


class ArgumentError(Exception):
    """A missing or malformed argument; `text` (HTML) is the reply to the admin."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def shown(value: str) -> str:
    """A user-typed value, escaped and cut, for quoting in a reply."""
    value = value if len(value) <= _SHOWN else value[: _SHOWN - 1] + "…"
    return html.escape(value)


def split_args(args: str | None) -> tuple[str, str]:
    """The first word and the rest (both stripped)."""
    first, _sep, rest = (args or "").strip().partition(" ")
    return first.strip(), rest.strip()


def parse_user_id(args: str | None, *, usage: str) -> tuple[int, str]:
    """A Telegram user id and whatever follows it."""
    first, rest = split_args(args)
    if not first:
        text = _("Which user? Usage: <code>{usage}</code>")
        raise ArgumentError(text.format(usage=html.escape(usage)))
    if not first.isdigit() or not 0 < int(first) <= _MAX_ID:
        text = _("“{value}” is not a user id: ids are positive numbers, as /users shows them.")
        raise ArgumentError(text.format(value=shown(first)))
    return int(first), rest


def parse_count(args: str | None, *, default: int, maximum: int, usage: str) -> int:
    """An optional positive count, capped at `maximum`."""
    first, _rest = split_args(args)
    if not first:
        return default
    if not first.isdigit() or int(first) < 1:
        text = _("“{value}” is not a positive number. Usage: <code>{usage}</code>")
        raise ArgumentError(text.format(value=shown(first), usage=html.escape(usage)))
    return min(int(first), maximum)


def parse_page(args: str | None, *, usage: str) -> int:
    """A page number from 1 (the caller checks the upper end)."""
    first, _rest = split_args(args)
    if not first:
        return 1
    if not first.isdigit() or int(first) < 1:
        text = _("“{value}” is not a page number: pages start at 1. Usage: <code>{usage}</code>")
        raise ArgumentError(text.format(value=shown(first), usage=html.escape(usage)))
    return int(first)
