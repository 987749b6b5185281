"""The deep-analysis report as plain data (`Report`) and as plain text.

Every front end renders the same sections from the same `Report`: the plain
text here (for `whytree ask` and `Answer.text`), Telegram HTML in the bot.
Sections: the symptom as measured (subject, metric, change, window), the primary
cause with the confidence (said once), secondary factors,
evidence lines with numbers, recommendations, an uncertainty line when the
confidence is below 0.7, and what could not be checked.

What could not be checked travels inside `Synthesis.evidence` as lines marked
with `NOT_CHECKED` (written by the explorer with `not_checked_line`), so an
`Answer` alone, e.g. one loaded from a finished job, is enough to rebuild the
whole report.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import (
    LOG_LEAD_CONFIDENCE,
    UNCERTAINTY_THRESHOLD,
    Answer,
    ConfidenceLevel,
    Synthesis,
    confidence_level,
)
from reasoning_core.tree.checked_by import checked_by
from reasoning_core.tree.symptom import symptom_line

NOT_CHECKED = "not checked"
_NOT_CHECKED_SEP = f": {NOT_CHECKED} — "
_NONE_ID = "none"
_NOT_STRONG = N_("the evidence is not strong enough for a firm conclusion")


def not_checked_line(where: str, reason: str) -> str:
    """An evidence line saying that a check (or hypothesis) could not be checked, and why."""
    return f"{where}{_NOT_CHECKED_SEP}{' '.join(reason.split())}"


class Report(BaseModel):
    """The sections of a report, ready to render in any markup."""

    confidence: float = Field(ge=0.0, le=1.0)
    level: ConfidenceLevel
    primary_id: str
    primary: str
    primary_confidence: float = Field(ge=0.0, le=1.0)
    #: No hypothesis reached 0.5: the primary is only the best candidate.
    not_established: bool = False
    #: The planner concluded there was nothing to investigate (primary id "none").
    nothing_to_investigate: bool = False
    secondary: list[str] = Field(default_factory=list)
    #: The primary stands only because the other causes were ruled out: "possible".
    by_elimination: bool = False
    #: Two causes fit about equally: the runner-up's title.
    rival: str | None = None
    #: What would confirm the primary (by elimination) or tell it from its rival.
    would_settle: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    recommendations: list[str] = Field(default_factory=list)
    #: Set (required) when the confidence is below 0.7.
    uncertainty: str | None = None
    not_checked: list[str] = Field(default_factory=list)
    tree_id: str | None = None
    planner: str | None = None
    #: The first line: subject, metric, change and window (tree/symptom.py), when measured.
    symptom: str | None = None
    #: The footer: which runbook checked the analysis, in words (tree/checked_by.py).
    checked_by: str | None = None
    #: What changed around the subject (`Synthesis.changed`): candidates, never a cause.
    changed: str | None = None
    #: What is new in the logs since it began (`Synthesis.log_news`).
    log_news: str | None = None
    #: The new error line the report opens with when no check established a cause.
    log_lead: str | None = None
    #: How the new log lines bear on the primary cause (`Synthesis.log_bearing`).
    log_bearing: list[str] = Field(default_factory=list)
    #: The reply to the question's form, the report's first lines (`Synthesis.reply`).
    reply: str | None = None


def build_report(
    synthesis: Synthesis,
    *,
    tree_id: str | None = None,
    planner: str | None = None,
    language: str = "en",
) -> Report:
    """The report sections of a synthesis (a missing uncertainty reason worded in `language`)."""
    evidence = [line for line in synthesis.evidence if _NOT_CHECKED_SEP not in line]
    not_checked = [
        line.replace(_NOT_CHECKED_SEP, ": ", 1)
        for line in synthesis.evidence
        if _NOT_CHECKED_SEP in line
    ]
    uncertainty = synthesis.uncertainty_reason
    if synthesis.confidence < UNCERTAINTY_THRESHOLD and not uncertainty:
        uncertainty = gettext(language, _NOT_STRONG)
    return Report(
        confidence=synthesis.confidence,
        level=confidence_level(synthesis.confidence),
        primary_id=synthesis.primary.id,
        primary=synthesis.primary.title,
        primary_confidence=synthesis.primary.confidence,
        not_established=synthesis.not_established,
        nothing_to_investigate=synthesis.primary.id == _NONE_ID,
        secondary=[f"{title} ({p:.2f})" for title, p in secondary_on_scale(synthesis)],
        by_elimination=synthesis.by_elimination,
        rival=synthesis.rival.title if synthesis.rival else None,
        would_settle=list(synthesis.would_settle),
        evidence=evidence,
        recommendations=list(synthesis.recommendations),
        uncertainty=uncertainty,
        not_checked=not_checked,
        tree_id=tree_id,
        planner=planner,
        symptom=symptom_line(synthesis.symptom, language) if synthesis.symptom else None,
        checked_by=checked_by(synthesis.runbook_title, planner, language),
        changed=synthesis.changed,
        log_news=synthesis.log_news,
        log_bearing=list(synthesis.log_bearing),
        log_lead=synthesis.log_lead if open_to_log_lead(synthesis) else None,
        reply=synthesis.reply,
    )


def open_to_log_lead(synthesis: Synthesis) -> bool:
    """May the report open with a new log line? Only when no check established a cause: not
    a cause standing by elimination (it has its own lead), not a healthy conclusion."""
    return (
        synthesis.not_established
        and not synthesis.by_elimination
        and synthesis.primary.id != _NONE_ID
    )


def shown_confidence(synthesis: Synthesis) -> float:
    """The number the report shows for its primary cause: its p when not established (or
    nothing to investigate), else the confidence (p lowered by a close runner-up)."""
    if synthesis.not_established or synthesis.primary.id == _NONE_ID:
        return synthesis.primary.confidence
    return synthesis.confidence


def secondary_on_scale(synthesis: Synthesis) -> list[tuple[str, float]]:
    """The secondary factors with numbers on the primary's scale: each p lowered as the
    primary's was (by a close runner-up), never above the primary's number."""
    shown = shown_confidence(synthesis)
    p1 = synthesis.primary.confidence
    scale = shown / p1 if p1 > 0 else 0.0
    return [(s.title, min(shown, s.confidence * scale)) for s in synthesis.secondary]


def report_of(answer: Answer) -> Report | None:
    """The report of an answer that carries a synthesis (deep answers do)."""
    if answer.synthesis is None:
        return None
    return build_report(
        answer.synthesis, tree_id=answer.tree_id, planner=answer.planner, language=answer.language
    )


def render_report_text(report: Report) -> str:
    """The report as plain text, one section per block."""
    lines = [report.reply, ""] if report.reply else []
    lines += [report.symptom] if report.symptom else []
    lines.append(_headline(report))
    _section(lines, "Secondary factors", report.secondary)
    _section(lines, "Evidence", report.evidence)
    _section(lines, "Recommendations", report.recommendations)
    if report.uncertainty and report.confidence < UNCERTAINTY_THRESHOLD:
        lines += ["", f"Why not sure: {report.uncertainty}"]
    _section(lines, "Could not check", report.not_checked)
    if report.tree_id:
        lines += ["", f"Reasoning tree: {report.tree_id}"]
    return "\n".join(lines)


def _headline(report: Report) -> str:
    if report.nothing_to_investigate:
        return f"Conclusion: {report.primary} ({report.primary_confidence:.2f})"
    if report.by_elimination:
        head = f"Possible cause (the others were ruled out): {report.primary} " + (
            f"({report.primary_confidence:.2f})"
        )
        return _settle(head, "What would confirm it", report.would_settle)
    if report.log_lead:  # set only when no check established a cause (open_to_log_lead)
        return (
            f"Possible cause, from the logs (no check confirms it): {report.log_lead} — "
            f"confidence low ({LOG_LEAD_CONFIDENCE:.2f})\nThe checks: no cause found (best "
            f"candidate: {report.primary}, {report.primary_confidence:.2f})"
        )
    if report.not_established:
        return (
            f"Primary cause: not established (best candidate: {report.primary}, "
            f"{report.primary_confidence:.2f})"
        )
    if report.rival:
        head = (
            f"Two causes fit about equally: {report.primary} and {report.rival} — confidence "
            f"{report.level.value} ({report.confidence:.2f})"
        )
        return _settle(head, "What would tell them apart", report.would_settle)
    return (
        f"Primary cause: {report.primary} — confidence {report.level.value} "
        f"({report.confidence:.2f})"
    )


def _settle(head: str, title: str, items: list[str]) -> str:
    return f"{head}\n{title}: {'; '.join(items)}" if items else head


def _section(lines: list[str], title: str, items: list[str]) -> None:
    if items:
        lines += ["", f"{title}:", *(f"- {item}" for item in items)]
