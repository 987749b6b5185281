"""Follow-ups that point back: "check cell 12345 again like yesterday", "как вчера", "снова".

Such a question leaves out what the earlier one said (the cell, the service, the
date). `reuse_parameters` finds the earlier entry it refers to and returns its
parameters merged under the new question's own, plus the question rewritten to
name them, so every path (runbook, LLM planner, quick) sees complete input.

The service hands in the question's one parse (`Request`); the text-only entry
points (`is_follow_up`, `extract_parameters`, `reuse_parameters` without a
request) parse it themselves, for callers that have nothing parsed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from reasoning_core.ports import MemoryEntry
from reasoning_core.understanding.parse import understand
from reasoning_core.understanding.request import Request


class Reuse(BaseModel):
    """Parameters carried over from an earlier entry, and the question restated with them."""

    entry_id: int | None
    parameters: dict[str, str] = Field(default_factory=dict)  # earlier, overridden by new
    added: dict[str, str] = Field(default_factory=dict)  # what the new question lacked
    question: str


def is_follow_up(question: str) -> bool:
    """Does the question point back at an earlier one ("again", "как вчера", "снова")?"""
    return understand(question).follow_up


def extract_parameters(text: str) -> dict[str, str]:
    """Cell ids, services and dates a question names: what a later follow-up may reuse.

    Read off the question's one parse (reasoning_core/understanding), like every other
    step: a calendar date is ``date``, a relative one ("since Monday") ``since``.
    """
    return parameters_of(understand(text), text)


def parameters_of(request: Request, text: str | None = None) -> dict[str, str]:
    """The reusable parameters of a parsed question (names as the user typed them)."""
    text = request.text if text is None else text
    found: dict[str, str] = {}
    cell = request.entity("cell") or request.entity("id")
    if cell is not None:
        found["cell"] = cell
    service = request.entity("service")
    if service is not None:
        found["service"] = service
    start = request.dates.start
    if start is not None:
        typed = re.search(re.escape(start.text), text, re.IGNORECASE)
        key = "date" if start.kind == "date" and start.year else "since"
        found[key] = typed.group(0) if typed else start.text
    return found


def reuse_parameters(
    question: str, entries: Sequence[MemoryEntry], *, request: Request | None = None
) -> Reuse | None:
    """For a follow-up, the earlier parameters it leaves out; None if it is not one
    or no earlier entry has parameters. `request`: the question's parse, when the
    caller has it (then the text is not parsed again)."""
    parsed = request if request is not None else understand(question)
    if not parsed.follow_up:
        return None
    own = parameters_of(parsed, question)
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
