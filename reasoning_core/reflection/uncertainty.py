"""`uncertainty_reason` from the real causes, for every answer below 0.7.

Causes, each only when it applies: the strategy's own doubt, no hypothesis
established, a small margin to the runner-up, inconclusive checks, missing
data (checks that failed or found nothing), and a judgement of the model that
no numbers back (the quick path, or a deep conclusion without data). A reason
already on the answer comes first; a cause it already covers (the same
markers, e.g. "runner-up") is not repeated.
"""

from __future__ import annotations

from pydantic import BaseModel

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import UNCERTAINTY_THRESHOLD, Answer, StrategyDecision, Synthesis, Tree
from reasoning_core.reflection.checkpoints import failed_checks
from reasoning_core.tree.aggregation import CLOSE_MARGIN, EVIDENCE_TYPES
from reasoning_core.tree.report import NOT_CHECKED
from reasoning_core.tree.synthesis import NONE_ID

_MAX_CHARS = 600
#: How an inconclusive result reads in a synthesis evidence line, in either language.
_INCONCLUSIVE = (": inconclusive (", ": без ответа (")
#: A cause: the words that show a reason already covers it, and its text.
Cause = tuple[tuple[str, ...], str]

#: Each cause's text and the words (markers) by which a reason already covers it, in
#: either language (a reason may have been worded in English or Russian).
_CAUSES: dict[str, tuple[str, tuple[str, ...]]] = {
    "strategy": (
        N_("the choice of how to answer was itself uncertain ({p:.2f}){why}"),
        ("choice of how to answer", "способа ответа"),
    ),
    "no_winner": (
        N_("no hypothesis reached 0.5"),
        ("reached 0.5", "not established", "не набрала 0.5", "не установлена"),
    ),
    "runner_up": (
        N_("the runner-up {title!r} ({p:.2f}) is only {margin:.2f} behind"),
        ("runner-up", "вторая гипотеза"),
    ),
    "inconclusive": (
        N_("{count} check(s) were inconclusive"),
        ("inconclusive", "без ответа", "не дали ответа"),
    ),
    "missing": (
        N_("missing data: {count} check(s) failed or found none ({names})"),
        ("missing data", "could not be run", "не хватает данных", "не удалось выполнить"),
    ),
    "judgement_only": (
        N_("this is the model's judgement, not backed by data"),
        ("judgement", "суждение"),
    ),
    "judgement_tree": (
        N_("no conclusive check was backed by data (only judgement)"),
        ("judgement", "суждение"),
    ),
    "confidence": (N_("the confidence is only {p:.2f}"), ()),
}


def _cause(key: str, language: str, **values: object) -> Cause:
    text, markers = _CAUSES[key]
    return markers, gettext(language, text).format(**values)


class UncertaintySources(BaseModel):
    """What an answer's uncertainty may come from; every field optional."""

    decision: StrategyDecision | None = None
    synthesis: Synthesis | None = None
    tree: Tree | None = None
    #: The answer is the model's own judgement, with no data behind it (the quick path).
    judgement_only: bool = False
    #: The language the causes are worded in.
    language: str = "en"


def uncertainty_causes(sources: UncertaintySources) -> list[Cause]:
    """The causes that apply, in a fixed order."""
    language = sources.language
    causes = [*_strategy(sources.decision, language)]
    synthesis, tree = sources.synthesis, sources.tree
    if synthesis is not None:
        causes += _race(synthesis, language)
        causes += _checks(synthesis, tree, language)
    if sources.judgement_only:
        causes.append(_cause("judgement_only", language))
    elif tree is not None and synthesis is not None and not _backed_by_data(tree):
        causes.append(_cause("judgement_tree", language))
    return causes


def uncertainty_reason(
    confidence: float, sources: UncertaintySources, *, existing: str | None = None
) -> str | None:
    """The reason to show with a confidence below 0.7 (the existing one when at or above)."""
    if confidence >= UNCERTAINTY_THRESHOLD:
        return existing
    parts = [existing.strip()] if existing and existing.strip() else []
    for markers, text in uncertainty_causes(sources):
        said = " ".join(parts).casefold()
        if not any(marker in said for marker in markers):
            parts.append(text)
    if not parts:
        parts.append(_cause("confidence", sources.language, p=confidence)[1])
    text = "; ".join(parts)
    return text if len(text) <= _MAX_CHARS else text[: _MAX_CHARS - 1] + "…"


def with_uncertainty(answer: Answer, *, tree: Tree | None = None) -> Answer:
    """The answer with an `uncertainty_reason` built from its causes when below 0.7,
    worded in the answer's language."""
    judgement = answer.synthesis is None and answer.planner == "llm" and answer.error is None
    sources = UncertaintySources(
        decision=answer.decision,
        synthesis=answer.synthesis,
        tree=tree,
        judgement_only=judgement,
        language=answer.language,
    )
    reason = uncertainty_reason(answer.confidence, sources, existing=answer.uncertainty_reason)
    if reason == answer.uncertainty_reason:
        return answer
    return answer.model_copy(update={"uncertainty_reason": reason})


def _strategy(decision: StrategyDecision | None, language: str) -> list[Cause]:
    if decision is None or decision.confidence >= UNCERTAINTY_THRESHOLD:
        return []
    why = f": {decision.uncertainty_reason}" if decision.uncertainty_reason else ""
    return [_cause("strategy", language, p=decision.confidence, why=why)]


def _race(synthesis: Synthesis, language: str) -> list[Cause]:
    causes: list[Cause] = []
    if synthesis.not_established and synthesis.primary.id != NONE_ID:
        causes.append(_cause("no_winner", language))
    if len(synthesis.ranking) > 1 and synthesis.margin < CLOSE_MARGIN:
        runner = synthesis.ranking[1]
        causes.append(
            _cause(
                "runner_up",
                language,
                title=runner.title,
                p=runner.confidence,
                margin=synthesis.margin,
            )
        )
    return causes


def _checks(synthesis: Synthesis, tree: Tree | None, language: str) -> list[Cause]:
    if tree is not None:
        failures = failed_checks(tree)
        inconclusive = sum(1 for f in failures if f.kind == "inconclusive")
        missing = [f.title for f in failures if f.kind != "inconclusive"]
    else:
        evidence = synthesis.evidence
        inconclusive = sum(1 for line in evidence if any(m in line for m in _INCONCLUSIVE))
        missing = [line.split(":")[0] for line in evidence if NOT_CHECKED in line]
    causes: list[Cause] = []
    if inconclusive:
        causes.append(_cause("inconclusive", language, count=inconclusive))
    if missing:
        names = ", ".join(dict.fromkeys(missing[:3]))
        causes.append(_cause("missing", language, count=len(missing), names=names))
    return causes


def _backed_by_data(tree: Tree) -> bool:
    return any(
        n.result is not None and n.result.has_data and n.result.confirmed is not None
        for n in tree.nodes.values()
        if n.node_type in EVIDENCE_TYPES
    )
