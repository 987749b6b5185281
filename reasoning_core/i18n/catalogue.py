"""The gettext catalogues, looked up per language and cached.

English is the message id itself, so English output needs no catalogue; a language
without a catalogue (or a message the catalogue lacks) falls back to English. Plural
forms come from the catalogue's ``Plural-Forms`` header (Russian has three).
"""

from __future__ import annotations

import gettext as _gettext
from functools import cache
from pathlib import Path

#: The gettext domain: the catalogues are ``<LOCALES_DIR>/<lang>/LC_MESSAGES/<DOMAIN>.mo``.
DOMAIN = "whytree"
#: Where the catalogues live (aiogram's ``I18n(path=LOCALES_DIR, domain=DOMAIN)`` reads them).
LOCALES_DIR = Path(__file__).resolve().parent / "locales"


@cache
def translator(language: str) -> _gettext.NullTranslations:
    """The translations of `language`: its catalogue, or English (the ids) when it has none."""
    return _gettext.translation(DOMAIN, LOCALES_DIR, languages=[language], fallback=True)


def gettext(language: str, message: str) -> str:
    """`message` (an English msgid) in `language`."""
    return translator(language).gettext(message)


def ngettext(language: str, singular: str, plural: str, n: int) -> str:
    """The form of `singular` / `plural` for the number `n` in `language`'s plural rules."""
    return translator(language).ngettext(singular, plural, n)


def pgettext(language: str, context: str, message: str) -> str:
    """`message` in `language`, told apart from the same English words elsewhere by
    `context` (one English word, two Russian ones: "retry" a check, "retry" as an action)."""
    return translator(language).pgettext(context, message)


def N_(message: str) -> str:
    """Mark `message` for extraction without translating it (tables translated where shown)."""
    return message
