"""The words every front end adds to an answer: the confidence tag and the section names
(Telegram's HTML, the terminal and the HTTP API say the same, in the answer's language)."""

from __future__ import annotations

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
