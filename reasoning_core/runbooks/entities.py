"""Entities and keywords in a question: which cell, which service, which language.

Runbooks carry the patterns (regexes with a named group per parameter); this
module applies them: case-insensitive, skipping captures that are ordinary
words ("why are 5xx errors up" has no service called "are"), trimming quotes
and trailing punctuation. Values are kept as text and only ever reach a query
as bound parameters or validated template values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

Language = Literal["en", "ru"]

MAX_VALUE_LENGTH = 128

#: Words a loose pattern may capture that are never an entity name.
STOPWORDS = frozenset(
    """
    a an the is are was were be been has have had do does did why what when where which who how
    on in at of for to from by with and or not no my our your their its this that these those
    there here all any some many much more most so very up down since after before today
    yesterday now http https api 5xx 4xx error errors latency traffic drop drops dropped cell
    cells service services server rate rates request requests high higher slow
    it everything something anything site website app system stuff thing things
    почему что как когда где какой какая какие кто на в во у по из от до с со за для и или не
    это этот эта эти все всё сервис сервиса сервисе сервисом сота соты соте соту сотой трафик
    ошибки ошибок ошибка рост выросли растут упал упала упало сегодня вчера
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_LATIN = re.compile(r"[a-z]", re.IGNORECASE)
_TRIM = "\"'`«»“”‘’()[]{}<>.,;:!?"


def detect_language(text: str) -> Language:
    """Russian when Cyrillic letters outnumber a third of the Latin ones, else English."""
    cyrillic, latin = len(_CYRILLIC.findall(text)), len(_LATIN.findall(text))
    return "ru" if cyrillic and cyrillic * 3 >= latin else "en"


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Entity patterns are matched case-insensitively."""
    return re.compile(pattern, re.IGNORECASE)


def clean_value(raw: str) -> str | None:
    """Trim quotes and punctuation; None for empty, over-long or stop-word values."""
    value = raw.strip().strip(_TRIM).strip()
    if not value or len(value) > MAX_VALUE_LENGTH or value.lower() in STOPWORDS:
        return None
    return value


def extract(text: str, patterns: Iterable[re.Pattern[str]], name: str) -> str | None:
    """The first acceptable value of group `name` over all patterns, in pattern order."""
    for pattern in patterns:
        if name not in pattern.groupindex:
            continue
        for match in pattern.finditer(text):
            raw = match.group(name)
            value = clean_value(raw) if raw else None
            if value is not None:
                return value
    return None


def entity_hits(text: str, patterns: Sequence[re.Pattern[str]]) -> dict[str, str]:
    """Every named group any pattern captures acceptably: {group: value}."""
    found: dict[str, str] = {}
    for pattern in patterns:
        for name in pattern.groupindex:
            if name not in found:
                value = extract(text, [pattern], name)
                if value is not None:
                    found[name] = value
    return found


def keyword_hits(text: str, keywords: Iterable[str]) -> list[str]:
    """Keywords found at the start of a word (so a stem "упал" also finds "упала")."""
    lowered = text.lower()
    hits = []
    for keyword in keywords:
        word = keyword.strip().lower()
        if word and re.search(r"(?<!\w)" + re.escape(word), lowered):
            hits.append(keyword)
    return hits
