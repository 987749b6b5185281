"""Follow-ups that point back: "check cell 12345 again like yesterday", "как вчера", "снова".

Such a question leaves out what the earlier one said (the cell, the service, the
date). `reuse_parameters` finds the earlier entry it refers to and returns its
parameters merged under the new question's own, plus the question rewritten to
name them, so every path (runbook, LLM planner, quick) sees complete input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from reasoning_core.ports import MemoryEntry

_FOLLOW_UP = re.compile(
    r"(?<!\w)(?:again|once more|one more time|like yesterday|as yesterday|same as yesterday"
    r"|like before|as before|like last time|as last time|same as last time|same as before"
    r"|redo|repeat|как вчера|как и вчера|снова|опять|ещё раз|еще раз|повтори\w*"
    r"|как в прошлый раз|как раньше|то же самое|то же, что)(?!\w)",
    re.IGNORECASE,
)
_VALUE = r"[\"'«`]?(?P<{name}>[A-Za-z0-9_.\-]*\d[A-Za-z0-9_.\-]*)"
_PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "cell": (
        re.compile(r"\bcells?\s*(?:name|id)?\s*[#№:=]?\s*" + _VALUE.format(name="cell"), re.I),
        re.compile(
            r"(?<!\w)(?:сот(?:а|ы|е|у|ой|ам|ах)|ячейк\w*|бс)\s*[#№:=]?\s*"
            + _VALUE.format(name="cell"),
            re.I,
        ),
    ),
    "service": (
        re.compile(r"(?<!\w)(?P<service>[A-Za-z][\w.\-]*)\s+(?:service|svc)\b", re.I),
        re.compile(
            r"(?<!\w)(?:service|svc|сервис\w*)\s+[\"'«`]?(?P<service>[A-Za-z][\w.\-]*)", re.I
        ),
    ),
    "date": (re.compile(r"(?<!\d)(?P<date>\d{4}-\d{2}-\d{2}|\d{1,2}\.\d{1,2}\.\d{2,4})(?!\d)"),),
    "since": (
        re.compile(
            r"(?<!\w)(?:since|from)\s+(?P<since>monday|tuesday|wednesday|thursday|friday"
            r"|saturday|sunday|yesterday|last week|\d{1,2}:\d{2})",
            re.I,
        ),
        re.compile(
            r"(?<!\w)(?:с|со|начиная с)\s+(?P<since>понедельника|вторника|среды|четверга"
            r"|пятницы|субботы|воскресенья|вчерашнего дня|прошлой недели|\d{1,2}:\d{2})",
            re.I,
        ),
    ),
}
_NOT_A_SERVICE = frozenset(
    """the a an this that our my your same each every is are was were has had in on at for
    to of and or down up errors error outage too also again""".split()  # noqa: SIM905 - a word list
)


class Reuse(BaseModel):
    """Parameters carried over from an earlier entry, and the question restated with them."""

    entry_id: int | None
    parameters: dict[str, str] = Field(default_factory=dict)  # earlier, overridden by new
    added: dict[str, str] = Field(default_factory=dict)  # what the new question lacked
    question: str


def is_follow_up(question: str) -> bool:
    """Does the question point back at an earlier one ("again", "как вчера", "снова")?"""
    return _FOLLOW_UP.search(question) is not None


def extract_parameters(text: str) -> dict[str, str]:
    """Cell ids, services and dates a question names: what a later follow-up may reuse."""
    found: dict[str, str] = {}
    for name, patterns in _PATTERNS.items():
        for pattern in patterns:
            match = next(
                (m for m in pattern.finditer(text) if _acceptable(name, m.group(name))), None
            )
            if match is not None:
                found[name] = match.group(name).strip(".-")
                break
    return found


def _acceptable(name: str, value: str) -> bool:
    return name != "service" or value.lower() not in _NOT_A_SERVICE


def reuse_parameters(question: str, entries: Sequence[MemoryEntry]) -> Reuse | None:
    """For a follow-up, the earlier parameters it leaves out; None if it is not one
    or no earlier entry has parameters."""
    if not is_follow_up(question):
        return None
    own = extract_parameters(question)
    source = _referenced_entry(own, [e for e in entries if e.parameters])
    if source is None:
        return None
    added = {k: v for k, v in source.parameters.items() if k not in own}
    rewritten = question
    if added:
        named = ", ".join(f"{k} {v}" for k, v in added.items())
        rewritten = f"{question.rstrip()} (as in the earlier request: {named})"
    return Reuse(
        entry_id=source.id,
        parameters={**source.parameters, **own},
        added=added,
        question=rewritten,
    )


def _referenced_entry(own: dict[str, str], entries: list[MemoryEntry]) -> MemoryEntry | None:
    """The newest entry sharing a parameter value with the question, else the newest."""
    if not entries:
        return None
    oldest = datetime.min.replace(tzinfo=UTC)
    newest_first = sorted(entries, key=lambda e: (e.created_at or oldest, e.id or 0), reverse=True)
    own_values = {v.lower() for v in own.values()}
    for entry in newest_first:
        if own_values & {v.lower() for v in entry.parameters.values()}:
            return entry
    return newest_first[0]
