"""Masking log lines before anyone sees them: secrets found by their shape.

A log line is quoted in reports, stored with the tree and may reach a model. Whatever
the software wrote into it — a bearer token, a password in a DSN, an `Authorization`
header, a `password=` pair, an e-mail address — is replaced by a marker first. The
configured secrets of whytree itself are redacted again by the logging setup; this masks
the unknown ones, by shape.
"""

from __future__ import annotations

import re

MASK = "***"

#: (pattern, replacement) in order: a DSN's password before a bare `password=` pair.
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # scheme://user:password@host — the password only
    (
        re.compile(r"(?P<keep>\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+(?=@)", re.I),
        rf"\g<keep>{MASK}",
    ),
    # Authorization: Bearer xyz / Basic xyz / a bare value
    (
        re.compile(
            r"(?P<keep>\b(?:proxy-)?authorization\s*[:=]\s*(?:bearer|basic|token)?\s*)\S+", re.I
        ),
        rf"\g<keep>{MASK}",
    ),
    (re.compile(r"(?P<keep>\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}", re.I), rf"\g<keep>{MASK}"),
    # password=..., passwd: ..., secret="...", api_key=..., token=..., access_key ...
    (
        re.compile(
            r"(?P<keep>\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|"
            r"client[_-]?secret|token|auth[_-]?token)\b[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&]+",
            re.I,
        ),
        rf"\g<keep>{MASK}",
    ),
    # a Telegram bot token (123456:35 characters)
    (re.compile(r"\b\d{6,12}:[A-Za-z0-9_-]{35}\b"), MASK),
    # JSON web tokens and long key-looking strings (AWS, GitHub, Slack, OpenAI prefixes)
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"), MASK),
    (
        re.compile(
            r"\b(?:AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abpr]-[A-Za-z0-9-]{10,}"
            r"|sk-[A-Za-z0-9_-]{20,})\b"
        ),
        MASK,
    ),
    # e-mail addresses
    (re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"), "***@***"),
)


def mask_line(text: str) -> str:
    """The line with every secret-shaped part replaced by a marker; the rest kept."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
