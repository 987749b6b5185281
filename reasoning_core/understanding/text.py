"""What users type, made safe and uniform before anything reads or stores it.

Applied once at every edge — each Telegram message (`NormalisedTextMiddleware` in
bot/telegram/middlewares/), each HTTP API question, each `whytree ask`/`chat` line — so
the question that is parsed, answered and stored is this text exactly; the parser reads
its text through it too (`parsed_text`), whoever called it:

- NFKC: full-width and other compatibility forms become plain ones ("１０２９１"
  -> "10291", "ﬁ" -> "fi");
- every other Unicode decimal digit becomes its ASCII digit (NFKC leaves
  Arabic-Indic "١٠٢٩١", N'Ko "߁߀߂߉߁" or Devanagari digits alone);
- lone surrogates and control characters go (PostgreSQL refuses NUL in text,
  SQLSTATE 22021); newlines and tabs stay, a carriage return becomes a newline.
"""

from __future__ import annotations

import re
import unicodedata

_NEWLINES = re.compile(r"\r\n?")
_KEPT_CONTROLS = frozenset("\n\t")


def clean_text(text: str) -> str:
    """The text as whytree reads and stores it (see the module docstring)."""
    text = _NEWLINES.sub("\n", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cs")
    text = unicodedata.normalize("NFKC", text)
    return "".join(_clean_char(ch) for ch in text)


def _clean_char(ch: str) -> str:
    if ch.isascii() and ch.isprintable():
        return ch
    if unicodedata.category(ch) == "Cc":
        return ch if ch in _KEPT_CONTROLS else ""
    digit = unicodedata.decimal(ch, None)
    return str(digit) if digit is not None else ch
