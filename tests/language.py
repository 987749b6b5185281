"""Is a reply in one language? What a reader would see as the other language, found in text.

What is not a word of either language is taken out first: HTML tags and
entities, tree and node ids ("a1b2c3d4e5f6", "h1.v2"), numbers with their
units, cell and site names, identifiers (OPENAI_API_KEY, cell_traffic_drop),
commands (/cancel), text to type (<code>…</code>), quoted user text, and a small allow-list of
technical tokens that read the same in Russian and English (RTWP, 5xx, SQL,
PromQL, CPU, p95, ...). What is left must be Russian words in a Russian reply
and English words in an English one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Tokens a Russian engineer writes in Latin letters too.
# fmt: off
TECHNICAL = frozenset({
    "rtwp", "5xx", "sql", "promql", "cpu", "p95", "p99", "oss", "tma", "http", "https", "api",
    "url", "id", "ids", "json", "llm", "ok", "whytree", "runbook", "runbooks", "telegram",
    "openai", "ollama", "vllm", "bs", "enodeb", "dbm", "db", "hour_stats", "demo", "cells",
    "checkout", "payments", "prometheus", "alertmanager", "utc", "postgresql", "postgres", "oom",
    "tls", "blackbox", "scrape", "killer", "doctor", "nginx", "redis", "istio",
})
# fmt: on

_CODE = re.compile(r"<code>.*?</code>", re.S)  # literal text to type, e.g. /project default
_TAG = re.compile(r"<[^>]+>")
_ENTITY = re.compile(r"&(?:[a-z]+|#\d+);")
_QUOTED = re.compile(r"«[^»]*»|“[^”]*”|\"[^\"]*\"")
_TREE_ID = re.compile(r"\b[0-9a-f]{12}\b")
_NODE_ID = re.compile(r"\b(?:h\d+|v\d+)(?:\.(?:h\d+|v\d+|retry))*\b")
_NAME = re.compile(r"\b[A-Za-z]*\d[\w-]*\b")  # 10291, S1029, MSK0457B, 10291_2, 5xx
_COMMAND = re.compile(r"/[a-z_]+\b")
_IDENTIFIER = re.compile(r"\b\w+_\w+\b")  # OPENAI_API_KEY, cell_traffic_drop
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_CYRILLIC_WORD = re.compile(r"[А-Яа-яЁё][А-Яа-яЁё-]*")


def _bare(text: str, *, quoted: Iterable[str] = ()) -> str:
    for piece in quoted:
        if len(piece.strip()) >= 4:
            text = text.replace(piece, " ")
    for pattern in (
        _CODE,
        _TAG,
        _ENTITY,
        _QUOTED,
        _TREE_ID,
        _NODE_ID,
        _COMMAND,
        _IDENTIFIER,
        _NAME,
    ):
        text = pattern.sub(" ", text)
    return text


def english_words(text: str, *, quoted: Iterable[str] = ()) -> list[str]:
    """Latin-letter words in `text` that are not technical tokens (a Russian reply has none).

    `quoted` are the user's own words (the question), which a reply may repeat.
    """
    words = _LATIN_WORD.findall(_bare(text, quoted=quoted))
    return [w for w in words if w.casefold().strip("'’-") not in TECHNICAL]


def russian_words(text: str, *, quoted: Iterable[str] = ()) -> list[str]:
    """Cyrillic words in `text` (an English reply has none)."""
    return _CYRILLIC_WORD.findall(_bare(text, quoted=quoted))


def foreign_words(text: str, language: str, *, quoted: Iterable[str] = ()) -> list[str]:
    """Words of the other language in a reply meant to be in `language`."""
    if language == "ru":
        return english_words(text, quoted=quoted)
    return russian_words(text, quoted=quoted)
