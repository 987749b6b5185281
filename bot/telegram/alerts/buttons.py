"""The buttons under an alert report and under /silences, and what their data may say.

Only short ids travel in callback data (Telegram allows 64 bytes): the action, the
alert analysis' id (or, for "Expire now", whytree's silence row id) and, for a
silence, its length in hours. No label travels in it: the matchers of a silence are
read from the stored analysis, so forged data can name an analysis, never a label.
"""

from __future__ import annotations

from typing import Literal

from aiogram.filters.callback_data import CallbackData
from aiogram.types import InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from reasoning_core import gettext

#: The silence lengths the buttons offer; callback data with any other is refused.
SILENCE_HOURS = (1, 4, 24)

#: s: silence, k: acknowledge ("I'm on it"), r: investigate again, x: expire a silence.
Action = Literal["s", "k", "r", "x"]


class AlertCallback(CallbackData, prefix="al"):
    a: Action
    i: int
    h: int = 0


def report_keyboard(analysis_id: int, language: str) -> InlineKeyboardMarkup:
    """🔕 Silence 1 h / 4 h / 24 h, ✋ I'm on it, 🔁 Investigate again."""
    builder = InlineKeyboardBuilder()
    for hours in SILENCE_HOURS:
        builder.button(
            text=gettext(language, "🔕 Silence {hours} h").format(hours=hours),
            callback_data=AlertCallback(a="s", i=analysis_id, h=hours),
        )
    builder.button(
        text=gettext(language, "✋ I'm on it"), callback_data=AlertCallback(a="k", i=analysis_id)
    )
    builder.button(
        text=gettext(language, "🔁 Investigate again"),
        callback_data=AlertCallback(a="r", i=analysis_id),
    )
    builder.adjust(3, 2)
    return builder.as_markup()


def retry_keyboard(analysis_id: int, hours: int, language: str) -> InlineKeyboardMarkup:
    """Alertmanager did not answer: the same silence, once more."""
    builder = InlineKeyboardBuilder()
    builder.button(
        text=gettext(language, "🔁 Try again: silence {hours} h").format(hours=hours),
        callback_data=AlertCallback(a="s", i=analysis_id, h=hours),
    )
    return builder.as_markup()


def expire_keyboard(rows: list[tuple[int, str]], language: str) -> InlineKeyboardMarkup | None:
    """One "Expire now" button per (silence row id, short label)."""
    if not rows:
        return None
    builder = InlineKeyboardBuilder()
    for action_id, label in rows:
        builder.button(
            text=gettext(language, "Expire now: {what}").format(what=label),
            callback_data=AlertCallback(a="x", i=action_id),
        )
    builder.adjust(1)
    return builder.as_markup()
