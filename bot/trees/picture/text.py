"""Untrusted node text made safe and short for a label: cleaned, cut, wrapped, escaped.

Node titles, descriptions and evidence come from planners, LLMs and data: they
may hold markup, control characters, bidi overrides, emoji or thousands of
characters. Everything that reaches a Graphviz HTML-like label goes through
`label_lines`, whose output is XML-escaped text lines.
"""

from __future__ import annotations

import html
import textwrap
import unicodedata

#: Bidi embeddings, overrides and isolates: they could reorder the text around them.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
ELLIPSIS = "…"


def without_bidi_controls(text: str) -> str:
    """`text` without bidi embeddings, overrides and isolates (right-to-left text itself
    stays and is shown right to left)."""
    return "".join(char for char in text if char not in _BIDI_CONTROLS)


def clean(text: str) -> str:
    """One line of printable text: control, format-override and unpaired surrogate
    characters dropped, whitespace runs collapsed to one space."""
    kept = []
    for char in text:
        if char in _BIDI_CONTROLS:
            continue
        category = unicodedata.category(char)
        if category in ("Cc", "Cs", "Co", "Cn") and not char.isspace():
            continue
        kept.append(char)
    return " ".join("".join(kept).split())


def cut(text: str, limit: int) -> str:
    """`text` cleaned and cut to at most `limit` characters (an ellipsis marks the cut)."""
    text = clean(text)
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + ELLIPSIS


def wrapped(text: str, *, width: int, max_lines: int) -> list[str]:
    """Cleaned text wrapped at `width` characters into at most `max_lines` lines; an
    ellipsis ends the last line when text was left out."""
    lines = textwrap.wrap(cut(text, width * (max_lines + 1)), width=width)
    if len(lines) <= max_lines:
        return lines
    last = lines[max_lines - 1]
    last = last if len(last) < width else last[: width - 1].rstrip()
    return [*lines[: max_lines - 1], last + ELLIPSIS]


def dot_quoted(text: str) -> str:
    """Cleaned text for inside a DOT "quoted string": backslashes (Graphviz escapes such
    as \\N) and double quotes escaped. Graphviz escapes it again for XML on output."""
    return clean(text).replace("\\", "\\\\").replace('"', '\\"')


def label_lines(text: str, *, width: int, max_lines: int) -> list[str]:
    """`wrapped` lines, each escaped for an HTML-like (XML) label."""
    return [
        html.escape(line, quote=True) for line in wrapped(text, width=width, max_lines=max_lines)
    ]


def language_of(text: str) -> str:
    """ "ru" when at least a third of the letters are Cyrillic, else "en" (the languages
    whytree answers in)."""
    cyrillic = sum(1 for char in text if "а" <= char.lower() <= "я" or char in "ёЁ")
    latin = sum(1 for char in text if "a" <= char.lower() <= "z")
    return "ru" if cyrillic and cyrillic * 2 >= latin else "en"
