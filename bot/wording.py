"""The words every front end says the same: the confidence tag and the section names an
answer gets, and the refusals of the rate limit and the daily budget (Telegram's HTML, the
terminal and the HTTP API say the same, in the answer's language)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from reasoning_core import ConfidenceLevel, confidence_level, gettext

_MARKS = {ConfidenceLevel.HIGH: "🟢", ConfidenceLevel.MEDIUM: "🟡", ConfidenceLevel.LOW: "🔴"}


def reply_words(language: str) -> dict[str, str]:
    """The words every reply adds to the answer's own text, in `language`."""
    return {
        "high": gettext(language, "high confidence"),
        "medium": gettext(language, "medium confidence"),
        "low": gettext(language, "low confidence"),
        "assumptions": gettext(language, "Assumptions"),
        "unsure": gettext(language, "Unsure"),
    }


def confidence_tag(confidence: float, language: str = "en") -> str:
    """'🟢 high confidence (0.86)' — the mark, the words and the number, in `language`."""
    level = confidence_level(confidence)
    return f"{_MARKS[level]} {reply_words(language)[level.value]} ({confidence:.2f})"


def rate_limit_text(limit: int, retry_after: float, language: str = "en") -> str:
    seconds = max(1, math.ceil(retry_after))
    text = gettext(
        language,
        "⏳ That's more than {limit} questions a minute — please slow down. "
        "You can ask again in {seconds} s.",
    )
    return text.format(limit=limit, seconds=seconds)


def budget_text(used: int, budget: int, now: datetime, language: str = "en") -> str:
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
    minutes = max(1, math.ceil((midnight - now).total_seconds() / 60))
    hours, minutes = divmod(minutes, 60)
    if hours:
        wait = gettext(language, "{hours} h {minutes} min")
    else:
        wait = gettext(language, "{minutes} min")
    text = gettext(
        language,
        "🪙 You've used today's token budget ({used:,} of {budget:,} tokens). "
        "You can ask again after midnight UTC, in {wait}. /usage shows your usage.",
    )
    return text.format(used=used, budget=budget, wait=wait.format(hours=hours, minutes=minutes))
