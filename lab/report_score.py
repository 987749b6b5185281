"""How the live benches read whytree's report: its headline and primary cause, whether it
names a cause, states it sure, names the fault's cause and component, or is a wrong cause
(docs/lab.md, "`whytree bench live`"). Shared by the alert bench (lab/bench.py), the
question bench (lab/asking.py) and the peers' service ranks (lab/system/scoring.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

from lab.fault import Fault


def lead(text: str) -> tuple[str, str]:
    """(headline, primary cause) of a report: its first two paragraphs (one paragraph is
    both). AC@1 is the primary cause's: secondary factors and evidence lines below it may
    name other causes, and are never scored."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    headline = paragraphs[0] if paragraphs else ""
    return headline, paragraphs[1] if len(paragraphs) > 1 else headline


#: How a report says it names no cause, in English and Russian.
NO_CAUSE = ("no runbook", "not established", "ни один мой ранбук", "не установлена")


def names_cause(text: str) -> bool:
    """Does whytree's message name a cause (not only "no runbook" or "not established")?"""
    low = " ".join(lead(text)).lower()
    return not any(phrase in low for phrase in NO_CAUSE)


#: How an alert's header message begins (bot/alerts/words.py): it names the alert and its
#: labels, not a cause, so it is never scored; the report follows it as its own message.
ALERT_HEADER = "🔔"


def first_report(messages: list[tuple[float, str]]) -> tuple[float, str] | None:
    """The first message that is whytree's report, not an alert's header."""
    return next((m for m in messages if not m[1].lstrip().startswith(ALERT_HEADER)), None)


#: The marks of a medium or high confidence tag (bot/wording.py) and of a low one.
_SURE_MARKS = ("🟢", "🟡")
_LOW_MARK = "🔴"
_NUMBER = re.compile(r"\((0?\.\d+|1\.0+)\)")
#: A confidence at or above this is medium (reasoning_core.models.confidence_level).
_MEDIUM_MIN = 0.5


def stated_sure(text: str) -> bool:
    """Does the report state its primary cause at medium confidence or above? Read from the
    primary cause's confidence tag (its mark, else its number), else the report's; a report
    that states no confidence at all counts as sure (nothing in it says otherwise)."""
    _, primary = lead(text)
    for part in (primary, text):
        if any(mark in part for mark in _SURE_MARKS):
            return True
        if _LOW_MARK in part:
            return False
        if number := _NUMBER.search(part):
            return float(number.group(1)) >= _MEDIUM_MIN
    return True


def wrong_cause(fault: Fault, text: str | None) -> bool:
    """A fault window's report whose primary cause names a cause other than the fault's
    (none of its `cause_terms`, not "not established"), at medium confidence or above."""
    if text is None or fault.nothing_wrong or not names_cause(text):
        return False
    _, primary = lead(text)
    if any(term in primary.lower() for term in fault.cause_terms):
        return False
    return stated_sure(text)


#: The change scan in a report (docs/changes.md), in English or Russian: its candidates
#: ("what changed first: web (namedprocess_… rose from 14:01:05), postgres (…)") or what it
#: looked at and found unchanged.
_SCAN_FIRST = re.compile(r"(?:what changed first|что изменилось первым): ([^(;\n]+?) \(")
_SCAN_SAID = re.compile(
    r"what changed first|что изменилось первым|none changed before the symptom"
    r"|ничего не изменилось до симптома"
)


def scan_used(text: str | None) -> bool:
    """Did the change scan contribute to the report (candidates, or "none changed")?"""
    return text is not None and _SCAN_SAID.search(text) is not None


def first_candidate(text: str | None) -> str | None:
    """The component the change scan put first in the report, or None."""
    found = _SCAN_FIRST.search(text or "")
    return found.group(1).strip() if found else None


def score(
    fault: Fault, text: str | None, *, lead_of: Callable[[str], tuple[str, str]] = lead
) -> tuple[bool, bool]:
    """(right cause, right component) for whytree's report: the cause named in its primary
    cause, the component in its headline or primary cause (`lead_of` finds them)."""
    if text is None or fault.nothing_wrong or not names_cause(text):
        return False, False
    headline, primary = lead_of(text)
    cause = any(term in primary.lower() for term in fault.cause_terms)
    component = bool(fault.component) and str(fault.component).lower() in (
        f"{headline}\n{primary}".lower()
    )
    return cause, component
