"""Templated wording of deep-analysis reports in the user's language (Russian or English).

The runbook planner has no LLM to write prose, so every phrase it adds to a
report comes from here: the names of alternatives ("availability outage"), the
primary's title with the alternative that held, the gate's "nothing to
explain" conclusion, uncertainty reasons, and the section headings of the
plain-text report (`render_report`). Numbers are never reworded: evidence
lines keep the verdict rules' figures as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import LOG_LEAD_CONFIDENCE, UNCERTAINTY_THRESHOLD, Synthesis
from reasoning_core.tree.aggregation import CLOSE_MARGIN
from reasoning_core.tree.report import Report
from reasoning_core.tree.synthesis import ESTABLISHED_MIN

#: Names of the alternatives runbook checks tag with `detail`.
DETAIL_TITLES: dict[str, str] = {
    "availability": N_("availability outage"),
    "interference": N_("uplink interference (RTWP)"),
    "cpu": N_("CPU throttling"),
    "memory": N_("memory near the limit"),
    "oom": N_("OOM kills"),
    "crash_loop": N_("a crash loop (restarts)"),
    "locks": N_("lock waits"),
    "connections": N_("connection slots exhausted"),
    "down": N_("down (not answering)"),
    "hung": N_("not responding (hung)"),
    "descriptors": N_("file descriptors near the limit"),
    "threads": N_("threads multiplied"),
}

_HEADINGS: dict[str, str] = {
    "confidence": N_("Confidence"),
    "primary_with": N_("{title} — confidence {level} ({p:.2f})"),
    "primary": N_("Primary cause"),
    "conclusion": N_("Conclusion"),
    "not_established": N_("not established (best candidate: {title}, {p:.2f})"),
    "possible": N_("Possible cause (the others were ruled out)"),
    "from_logs": N_("Possible cause, from the logs (no check confirms it)"),
    "low": N_("low"),
    "checks_found_none": N_("The checks: no cause found (best candidate: {title}, {p:.2f})"),
    "confirm": N_("What would confirm it"),
    "race": N_("Two causes fit about equally"),
    "pair": N_("{first} and {second}"),
    "apart": N_("What would tell them apart"),
    "secondary": N_("Secondary factors"),
    "evidence": N_("Evidence"),
    "recommendations": N_("Recommendations"),
    "why": N_("Why not sure"),
    "not_checked": N_("Could not check"),
    "tree": N_("Reasoning tree"),
}
#: The confidence levels' names (report.py's `ConfidenceLevel` values).
_LEVELS = {"high": N_("high"), "medium": N_("medium"), "low": N_("low")}

_PHRASES: dict[str, str] = {
    "against": N_("speaks against it: {text}"),
    "not_against": N_("does not speak against it: {text}"),
    "against_check": N_("Against: {text}"),
    "weak": N_("no hypothesis reached {min:.1f} (best: {title!r} at {p:.2f})"),
    "close": N_("the runner-up {title!r} ({p2:.2f}) is close to the primary ({p1:.2f})"),
    "thin": N_("the evidence for {title!r} is weak ({p:.2f})"),
}


def phrase(key: str, language: str, **values: object) -> str:
    """One templated phrase of the report in `language` ("ru" or anything else = "en")."""
    return gettext(language, _PHRASES[key]).format(**values)


def detail_title(detail: str, language: str) -> str | None:
    """The name of an alternative (`detail` tag of a check), or None if unknown."""
    text = DETAIL_TITLES.get(detail)
    return gettext(language, text) if text else None


def primary_title(title: str, detail: str | None) -> str:
    """The hypothesis title with the alternative that held: "Technical problem: outage"."""
    if not detail:
        return title
    base = title.split(" (", 1)[0].rstrip()
    return f"{base}: {detail}"


def gate_conclusion(title: str, lines: Sequence[str]) -> str:
    """The text of a "nothing to explain" answer: the gate's title, then its numbers."""
    return "\n".join([title, *lines])


def uncertainty(synthesis: Synthesis, language: str) -> str | None:
    """Why the answer is unsure, worded in `language`; None when it is sure enough."""
    close = synthesis.margin < CLOSE_MARGIN and len(synthesis.ranking) > 1
    if synthesis.confidence >= UNCERTAINTY_THRESHOLD and not close:
        return None
    primary = synthesis.primary
    reasons = []
    if primary.confidence < ESTABLISHED_MIN:
        reasons.append(
            phrase(
                "weak", language, min=ESTABLISHED_MIN, title=primary.title, p=primary.confidence
            )
        )
    if close:
        runner = synthesis.ranking[1]
        reasons.append(
            phrase(
                "close", language, title=runner.title, p2=runner.confidence, p1=primary.confidence
            )
        )
    if not reasons:
        reasons.append(phrase("thin", language, title=primary.title, p=primary.confidence))
    return "; ".join(reasons)


def render_report(report: Report, language: str) -> str:
    """The plain-text report with headings in `language` (in English the same text as
    report.py's `render_report_text`)."""
    h = {key: gettext(language, text) for key, text in _HEADINGS.items()}
    level = _LEVELS.get(report.level.value, report.level.value)
    level = gettext(language, level)
    lines = [report.reply, ""] if report.reply else []
    lines += [report.symptom] if report.symptom else []
    lines.append(_headline(report, h, level))
    _section(lines, h["secondary"], report.secondary)
    _section(lines, h["evidence"], report.evidence)
    _section(lines, h["recommendations"], report.recommendations)
    if report.uncertainty and report.confidence < UNCERTAINTY_THRESHOLD:
        lines += ["", f"{h['why']}: {report.uncertainty}"]
    _section(lines, h["not_checked"], report.not_checked)
    if report.tree_id:
        lines += ["", f"{h['tree']}: {report.tree_id}"]
    return "\n".join(lines)


def headline(report: Report, language: str) -> str:
    """The report's cause line(s) in `language`, as `render_report` writes them."""
    h = {key: gettext(language, text) for key, text in _HEADINGS.items()}
    return _headline(report, h, gettext(language, _LEVELS.get(report.level.value, "low")))


def _headline(report: Report, h: dict[str, str], level: str) -> str:
    if report.nothing_to_investigate:
        return f"{h['conclusion']}: {report.primary} ({report.primary_confidence:.2f})"
    if report.by_elimination:
        head = f"{h['possible']}: {report.primary} ({report.primary_confidence:.2f})"
        return _settle(head, h["confirm"], report.would_settle)
    if report.log_lead:  # set only when no check established a cause (open_to_log_lead)
        text = h["primary_with"].format(
            title=report.log_lead, level=h["low"], p=LOG_LEAD_CONFIDENCE
        )
        found = h["checks_found_none"].format(title=report.primary, p=report.primary_confidence)
        return f"{h['from_logs']}: {text}\n{found}"
    if report.not_established:
        text = h["not_established"].format(title=report.primary, p=report.primary_confidence)
        return f"{h['primary']}: {text}"
    if report.rival:
        pair = h["pair"].format(first=report.primary, second=report.rival)
        text = h["primary_with"].format(title=pair, level=level, p=report.confidence)
        return _settle(f"{h['race']}: {text}", h["apart"], report.would_settle)
    text = h["primary_with"].format(title=report.primary, level=level, p=report.confidence)
    return f"{h['primary']}: {text}"


def _settle(head: str, title: str, items: list[str]) -> str:
    return f"{head}\n{title}: {'; '.join(items)}" if items else head


def _section(lines: list[str], title: str, items: list[str]) -> None:
    if items:
        lines += ["", f"{title}:", *(f"- {item}" for item in items)]
