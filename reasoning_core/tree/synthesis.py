"""The root's conclusion: competing hypotheses -> `Synthesis`, with honest reasons.

Numbers come from `aggregation` (primary = highest p, confidence lowered by a
close runner-up). This module adds what a reader needs: the ranking, secondary
factors (other hypotheses with p >= `SECONDARY_MIN` that a check confirmed and none
refuted), evidence lines with their numbers, "not established" when no hypothesis
reaches `ESTABLISHED_MIN`, "by elimination" when the primary stands only because its
rivals fell (no confirmed check measures what it blames), a close race said as one
(`rival`, a runner-up within `CLOSE_MARGIN`) with what would settle it, and an
uncertainty reason built from the real causes whenever confidence is below
`UNCERTAINTY_THRESHOLD` or the runner-up is close. Recommendations are left to
the planner that writes the report.
"""

from __future__ import annotations

from reasoning_core.models import UNCERTAINTY_THRESHOLD, Node, RankedHypothesis, Synthesis, Tree
from reasoning_core.tree.aggregation import (
    CLOSE_MARGIN,
    ELIMINATION_MAX,
    EVIDENCE_TYPES,
    adjusted_confidence,
    margin_of,
    measured,
    ranking,
    strength,
    uncapped_confidence,
    verdicts,
)
from reasoning_core.tree.labels import LABEL_CHARS, shorten
from reasoning_core.tree.links import chain_confidence
from reasoning_core.tree.walk import OPEN, children, descendants, is_active, is_link, root_of
from reasoning_core.tree.words import tree_phrase, verdict_word

#: Other hypotheses at least this likely are reported as secondary factors.
SECONDARY_MIN = 0.5
#: Below this p for the best hypothesis, the cause is "not established".
ESTABLISHED_MIN = 0.5
assert ELIMINATION_MAX < ESTABLISHED_MIN, "a cause no check measured is never established"
#: Id of the placeholder primary when no hypothesis survives.
NONE_ID = "none"


def synthesize(tree: Tree, *, language: str = "en") -> Synthesis:
    """Conclude from the root's hypotheses as they stand now (pure; tree unchanged).

    `language` words the evidence lines and the uncertainty reason; the numbers do
    not depend on it.
    """
    ranked = ranking(tree)
    if not ranked:
        return _nothing_to_conclude(tree, language)
    entries = [_ranked(node, p) for node, p in ranked]
    margin = margin_of(ranked)
    # A cause whose "because" chain is open (or still being checked) is not stated firmly.
    confidence = chain_confidence(tree, ranked[0][0], adjusted_confidence(ranked[0][1], margin))
    rival = _rival(tree, ranked, margin)
    secondary = [(n, r) for (n, _), r in zip(ranked[1:], entries[1:], strict=True)]
    secondary = [
        (n, r)
        for n, r in secondary
        if r.confidence >= SECONDARY_MIN
        and supported(tree, n)
        and n is not rival
        and has_own_finding(tree, n, ranked[0][0])
    ]
    primary = ranked[0][0]
    reported = [primary, *([rival] if rival else []), *(n for n, _ in secondary)]
    eliminated = by_elimination(tree, primary)
    return Synthesis(
        primary=entries[0],
        confidence=confidence,
        margin=margin,
        ranking=entries,
        secondary=[r for _, r in secondary],
        evidence=[line for node in reported for line in evidence_lines(tree, node, language)],
        uncertainty_reason=_uncertainty(tree, ranked, confidence, margin, language),
        not_established=ranked[0][1] < ESTABLISHED_MIN,
        by_elimination=eliminated,
        rival=entries[1] if rival else None,
        would_settle=_would_settle(tree, primary, rival, eliminated, language),
    )


def supported(tree: Tree, hypothesis: Node) -> bool:
    """A check under the hypothesis confirmed it and none refuted it (a secondary factor
    must be one; a hypothesis its own checks speak against is not listed)."""
    found = verdicts(tree, hypothesis)
    return any(e.confirmed for e in found) and not any(e.confirmed is False for e in found)


def has_own_finding(tree: Tree, hypothesis: Node, primary: Node) -> bool:
    """A check of the hypothesis confirmed something the primary's checks did not: a
    factor beside the cause, not another reading of the symptom both were checked on (a
    killed service's "up 0" confirms "another program holds the port" as much as "the
    process is down"; only the scrape's error tells them apart)."""
    shared = {
        key
        for node in _checks(tree, primary)
        if node.result and node.result.confirmed
        for key in [_check_key(node)]
        if key
    }
    return any(
        node.result is not None and node.result.confirmed and _check_key(node) not in shared
        for node in _checks(tree, hypothesis)
    )


def _check_key(node: Node) -> str | None:
    """The planner's key of the check behind an evidence node (the same check under two
    hypotheses has one key), else None."""
    check = node.context.get("check")
    key = check.get("key") if isinstance(check, dict) else None
    return key if isinstance(key, str) and key else None


def by_elimination(tree: Tree, hypothesis: Node) -> bool:
    """Would the hypothesis be established but for the cap of a cause no check measured?"""
    return (
        measured(tree, hypothesis) is False
        and uncapped_confidence(tree, hypothesis) >= ESTABLISHED_MIN
    )


def _rival(tree: Tree, ranked: list[tuple[Node, float]], margin: float) -> Node | None:
    """The runner-up of a close race between two established causes, or None."""
    if len(ranked) < 2 or margin >= CLOSE_MARGIN:  # noqa: PLR2004 - a primary and a runner-up
        return None
    runner, p2 = ranked[1]
    return runner if p2 >= ESTABLISHED_MIN and supported(tree, runner) else None


def _would_settle(
    tree: Tree, primary: Node, rival: Node | None, eliminated: bool, language: str
) -> list[str]:
    """What would confirm a primary that stands by elimination, or tell it from its rival:
    the checks of theirs still open or inconclusive, else a check that would measure it."""
    nodes = [primary, *([rival] if rival else [])]
    if not eliminated and rival is None:
        return []
    open_checks = [
        tree_phrase("open_check", language, check=f"{label(node)} / {label(check)}")
        for node in nodes
        for check in _checks(tree, node)
        if check.result is None or check.result.confirmed is None
    ]
    if rival is not None:
        apart = tree_phrase("apart", language, first=label(primary), second=label(rival))
        return [*open_checks[:3], apart]
    return [*open_checks[:3], tree_phrase("measure_it", language, title=label(primary))]


def label(node: Node) -> str:
    """A node's title, or its description shortened by whole words; a retry says so in a
    word ("… (retry)") instead of repeating how it differs."""
    text = " ".join(node.description.split())
    if node.context.get("retry_of") and text.endswith(")") and " (" in text:
        main, note = text.rsplit(" (", 1)
        word = note.split(":", 1)[0].rstrip(")")
        return f"{shorten(main, LABEL_CHARS - len(word) - 3)} ({word})"
    return node.title or shorten(text, LABEL_CHARS)


def _ranked(node: Node, p: float) -> RankedHypothesis:
    # A runbook planner keeps its stable hypothesis key in context["key"].
    key = node.context.get("key")
    return RankedHypothesis(
        id=key if isinstance(key, str) and key else node.id,
        node_id=node.id,
        title=label(node),
        confidence=p,
    )


def _checks(tree: Tree, hypothesis: Node) -> list[Node]:
    """Active evidence nodes anywhere under a hypothesis, its "because" links' aside (the
    chain says those, tree/chain.py)."""
    found: list[Node] = []
    for child in children(tree, hypothesis.id):
        if not is_active(child) or is_link(child):
            continue
        if child.node_type in EVIDENCE_TYPES:
            found.append(child)
        found.extend(_checks(tree, child))
    return found


def evidence_lines(tree: Tree, hypothesis: Node, language: str = "en") -> list[str]:
    """One line per result under a hypothesis, leading with what was found: the verdict
    and the finding's numbers, its strength, then which check of which hypothesis."""
    lines = []
    for check in _checks(tree, hypothesis):
        if check.result is None:
            continue
        verdict = verdict_word(check.result.confirmed, language)
        found = f"{verdict}: {check.result.text}" if check.result.text else verdict
        where = f"{label(hypothesis)} / {label(check)}"
        lines.append(f"{found} ({strength(check.result):.2f}) — {where}")
    return lines


def _uncertainty(
    tree: Tree,
    ranked: list[tuple[Node, float]],
    confidence: float,
    margin: float,
    language: str,
) -> str | None:
    close = margin < CLOSE_MARGIN
    if confidence >= UNCERTAINTY_THRESHOLD and not close:
        return None
    (primary, p1), reasons = ranked[0], []
    if p1 < ESTABLISHED_MIN:
        reasons.append(
            tree_phrase("no_winner", language, min=ESTABLISHED_MIN, title=label(primary), p=p1)
        )
    if close:
        runner, p2 = ranked[1]
        reasons.append(
            tree_phrase(
                "close",
                language,
                title=label(runner),
                p2=p2,
                margin=margin,
                p1=p1,
                confidence=confidence,
            )
        )
    if by_elimination(tree, primary):
        reasons.append(tree_phrase("eliminated", language, title=label(primary)))
    if confidence < UNCERTAINTY_THRESHOLD:
        reasons.extend(_evidence_gaps(tree, primary, language))
    if not reasons:
        reasons.append(tree_phrase("weak", language, title=label(primary), p=p1))
    return "; ".join(reasons)


def _evidence_gaps(tree: Tree, primary: Node, language: str) -> list[str]:
    checks = _checks(tree, primary)
    results = [c.result for c in checks if c.result is not None]
    gaps = []
    if not checks:
        gaps.append(tree_phrase("no_checks", language, title=label(primary)))
    inconclusive = sum(1 for r in results if r.confirmed is None)
    if inconclusive:
        gaps.append(tree_phrase("inconclusive", language, count=inconclusive, total=len(results)))
    if results and not any(r.has_data and r.confirmed is not None for r in results):
        gaps.append(tree_phrase("no_data", language))
    pending = sum(1 for c in checks if c.status in OPEN and c.result is None)
    if pending:
        gaps.append(tree_phrase("pending", language, count=pending))
    return gaps


def _nothing_to_conclude(tree: Tree, language: str) -> Synthesis:
    root = root_of(tree)
    hypotheses = [n for n in descendants(tree, root.id) if n.node_type == "hypothesis"]
    reason = tree_phrase("all_closed" if hypotheses else "none_proposed", language)
    title = tree_phrase("no_cause", language)
    none = RankedHypothesis(id=NONE_ID, title=title, confidence=0.0)
    return Synthesis(
        primary=none, confidence=0.0, margin=0.0, uncertainty_reason=reason, not_established=True
    )
