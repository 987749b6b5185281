"""The "not established" report: when the analysis ends without a winner, say so honestly.

It lists what was checked, what was ruled out, what could not be checked,
which data would settle the question, and a clarifying question for the user
where one would help; the confidence stays below 0.5. `apply_not_established`
folds it into the `Synthesis` (so an `Answer` alone still carries it: the
settling data and the question become recommendations, checks that found no
data become "not checked" evidence lines), and `render_not_established` gives
the block of text a report shows.
"""

from __future__ import annotations

from collections.abc import Collection

from pydantic import BaseModel, Field

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Synthesis, Tree
from reasoning_core.reflection.checkpoints import failed_checks
from reasoning_core.reflection.findings import (
    checked_lines,
    clarifying_question,
    missing_lines,
    ruled_out,
    settle_lines,
)
from reasoning_core.tree.reasons import reason_text
from reasoning_core.tree.report import NOT_CHECKED, not_checked_line

#: The confidence of a "not established" answer stays below this.
NOT_ESTABLISHED_MAX = 0.49

_WORDS: dict[str, str] = {
    "headline": N_("The cause is not established (confidence {confidence:.2f})."),
    "checked": N_("Checked"),
    "ruled_out": N_("Ruled out"),
    "missing": N_("Could not check"),
    "settle": N_("Data that would settle it"),
    "question": N_("Question for you"),
    "get": N_("Needed: {what}"),
    "ask": N_("Answer: {question}"),
    "uncertainty": N_("the cause is not established"),
}


class NotEstablished(BaseModel):
    """The sections of a "not established" report."""

    confidence: float = Field(ge=0.0, le=NOT_ESTABLISHED_MAX)
    checked: list[str] = Field(default_factory=list)
    ruled_out: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    settle_with: list[str] = Field(default_factory=list)
    question: str | None = None


def not_established(
    tree: Tree, synthesis: Synthesis, *, language: str = "en", question: str | None = None
) -> NotEstablished | None:
    """The report when the synthesis did not establish a cause; None when it did."""
    if not synthesis.not_established:
        return None
    return NotEstablished(
        confidence=min(synthesis.confidence, NOT_ESTABLISHED_MAX),
        checked=checked_lines(tree, language=language),
        ruled_out=ruled_out(tree),
        missing=missing_lines(tree, language=language),
        settle_with=settle_lines(tree, language=language),
        question=question or clarifying_question(tree, language=language),
    )


def apply_not_established(
    synthesis: Synthesis, report: NotEstablished, tree: Tree, *, language: str = "en"
) -> Synthesis:
    """The synthesis carrying the report: capped confidence, settling data, the question."""
    present = set(synthesis.evidence)
    unchecked = [
        line
        for f in failed_checks(tree)
        if tree.nodes[f.node_id].status != "rejected"  # rejected ones are listed already
        and (line := _unchecked(f.hypothesis, f.title, f.reason, language)) not in present
    ]
    advice = [gettext(language, _WORDS["get"]).format(what=line) for line in report.settle_with]
    if report.question:
        advice.append(gettext(language, _WORDS["ask"]).format(question=report.question))
    reason = gettext(language, _WORDS["uncertainty"])
    if synthesis.uncertainty_reason:
        reason = f"{reason}: {synthesis.uncertainty_reason}"
    return synthesis.model_copy(
        update={
            "confidence": min(synthesis.confidence, NOT_ESTABLISHED_MAX),
            "not_established": True,
            "evidence": [*synthesis.evidence, *unchecked],
            "recommendations": list(dict.fromkeys([*advice, *synthesis.recommendations])),
            "uncertainty_reason": reason,
        }
    )


def _unchecked(hypothesis: str, title: str, reason: str, language: str) -> str:
    return not_checked_line(f"{hypothesis} / {title}", reason_text(reason, language))


def render_not_established(
    report: NotEstablished, *, language: str = "en", shown: Collection[str] = ()
) -> str:
    """The report as a block of plain text, one section per heading.

    Items the surrounding report already shows (`shown`: its evidence, "could not
    check" and recommendation lines) are left out, so nothing is said twice.
    """
    seen = set(shown)

    def new(item: str) -> bool:
        stripped = item.replace(f": {NOT_CHECKED} — ", ": ", 1)
        return not {item, stripped, gettext(language, _WORDS["get"]).format(what=item)} & seen

    lines = [gettext(language, _WORDS["headline"]).format(confidence=report.confidence)]
    for key, items in (
        ("checked", report.checked),
        ("ruled_out", report.ruled_out),
        ("missing", report.missing),
        ("settle", report.settle_with),
    ):
        fresh = [item for item in items if new(item)]
        if fresh:
            lines += ["", f"{gettext(language, _WORDS[key])}:", *(f"- {item}" for item in fresh)]
    if (
        report.question
        and gettext(language, _WORDS["ask"]).format(question=report.question) not in seen
    ):
        lines += ["", f"{gettext(language, _WORDS['question'])}: {report.question}"]
    return "\n".join(lines)
