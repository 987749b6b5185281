"""Merge strategies: how the explorer turns the tree and the planner's wording into one synthesis.

The numbers always come from aggregation (reasoning_core/tree); the planner adds
recommendations and, in the user's language, the uncertainty wording and the
primary's title (e.g. which alternative of the primary held). Whatever the strategy,
the primary is then followed down its "because" chain (tree/chain.py).

- ``best_first`` (default): the aggregated synthesis as it is: the primary is
  the hypothesis with the highest p, its confidence lowered when the runner-up
  is close. The planner's wording is taken, its choice of primary is not.
- ``weighted_vote``: each hypothesis's p is weighted by how much of it was
  actually checked: score = p x (conclusive checks / checks planned). The
  primary is the highest score and the confidence is that score (lowered by a
  close runner-up), so a likely but barely checked hypothesis does not win with
  full confidence over a slightly less likely, fully checked one.
- ``llm_synthesis``: the planner may choose the primary among the ranked
  hypotheses (e.g. between two close ones), but its choice is only as confident
  as its own p, and is halved when the data favour another hypothesis.
"""

from __future__ import annotations

import logging

from reasoning_core.errors import ReasoningError, StoreError
from reasoning_core.explore.budgets import BUDGET_REASON, DEADLINE_REASON
from reasoning_core.explore.emitter import Emit
from reasoning_core.explore.planner_gate import PlannerGate
from reasoning_core.explore.policy import ROOT_PRIORITY, MergeStrategy
from reasoning_core.explore.progress import line
from reasoning_core.explore.stopping import StopSignal
from reasoning_core.i18n import N_, gettext
from reasoning_core.models import UNCERTAINTY_THRESHOLD, Node, RankedHypothesis, Synthesis, Tree
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.reflection.revision import SET_ASIDE
from reasoning_core.tree.aggregation import CLOSE_MARGIN, EVIDENCE_TYPES, adjusted_confidence
from reasoning_core.tree.chain import with_chain
from reasoning_core.tree.checked_by import with_runbook_title
from reasoning_core.tree.manager import TreeManager
from reasoning_core.tree.reasons import reason_text
from reasoning_core.tree.report import not_checked_line
from reasoning_core.tree.symptom import with_symptom
from reasoning_core.tree.synthesis import SECONDARY_MIN, label, synthesize
from reasoning_core.tree.walk import descendants
from reasoning_core.tree.words import tree_phrase

log = logging.getLogger(__name__)

_NOTES: dict[str, str] = {
    "vote": N_(
        "weighted vote: {title!r} scores {score:.2f} "
        "(p {p:.2f}, {share:.0%} of its checks conclusive)"
    ),
    "chose": N_("the planner chose {title!r} ({p:.2f}) over {other!r} ({p2:.2f})"),
    "unrun": N_("{count} planned check(s) could not be run"),
}


def _say(key: str, language: str, **values: object) -> str:
    return gettext(language, _NOTES[key]).format(**values)


async def conclude(
    ctx: PlanningContext,
    *,
    manager: TreeManager,
    gate: PlannerGate,
    stop: StopSignal,
    emit: Emit,
    strategy: MergeStrategy,
) -> Synthesis:
    """The final synthesis: aggregated, worded by the planner (unless out of time), merged."""
    tree = manager.tree
    # The same numbers as the synthesis the manager keeps, worded in the user's language.
    aggregated = synthesize(tree, language=ctx.language)
    worded: Synthesis | None = None
    if not stop.deadline_reached:
        emit(line("writing"))
        try:
            worded = await gate.ask(
                ROOT_PRIORITY, lambda planner: planner.synthesize(ctx, tree, aggregated)
            )
        except StoreError:
            raise
        except ReasoningError as e:
            log.warning("the planner could not word the synthesis: %s", e)
    merged = merge(strategy, manager.tree, aggregated, worded, language=ctx.language)
    chained = with_chain(manager.tree, merged, language=ctx.language)
    unchecked = with_unchecked(manager.tree, chained, language=ctx.language)
    return with_runbook_title(manager.tree, with_symptom(manager.tree, unchecked))


def merge(
    strategy: MergeStrategy,
    tree: Tree,
    aggregated: Synthesis,
    worded: Synthesis | None,
    *,
    language: str = "en",
) -> Synthesis:
    """The final synthesis under `strategy`; `worded` is the planner's version, if any."""
    if strategy == "weighted_vote":
        chosen = weighted_vote(tree, aggregated, language)
    elif strategy == "llm_synthesis" and worded is not None:
        chosen = planner_choice(aggregated, worded, language)
    else:
        chosen = aggregated
    if worded is None:
        return chosen
    uncertainty = chosen.uncertainty_reason
    if chosen.confidence < UNCERTAINTY_THRESHOLD and worded.uncertainty_reason:
        uncertainty = worded.uncertainty_reason
        if chosen.uncertainty_reason and chosen.uncertainty_reason not in uncertainty:
            uncertainty = f"{uncertainty} ({chosen.uncertainty_reason})"
    return _with_wording(chosen, worded).model_copy(
        update={
            "recommendations": list(worded.recommendations),
            "uncertainty_reason": uncertainty,
        }
    )


def _with_wording(chosen: Synthesis, worded: Synthesis) -> Synthesis:
    """The planner's title for the chosen primary (e.g. naming which alternative held)."""
    title = worded.primary.title.strip()
    if worded.primary.id != chosen.primary.id or not title or title == chosen.primary.title:
        return chosen
    primary = chosen.primary.model_copy(update={"title": title})
    ranking = [primary if r == chosen.primary else r for r in chosen.ranking]
    return chosen.model_copy(update={"primary": primary, "ranking": ranking})


def coverage(tree: Tree, node_id: str | None) -> float:
    """Share of the checks planned under a hypothesis that came back conclusive with data."""
    if node_id is None or node_id not in tree.nodes:
        return 0.0
    checks = [
        n
        for n in descendants(tree, node_id)
        if n.node_type in EVIDENCE_TYPES and n.status != "pruned"
    ]
    if not checks:
        return 0.0
    conclusive = sum(
        1
        for n in checks
        if n.status == "completed"
        and n.result is not None
        and n.result.confirmed is not None
        and n.result.has_data
    )
    return conclusive / len(checks)


def weighted_vote(tree: Tree, aggregated: Synthesis, language: str = "en") -> Synthesis:
    """Rank by p x coverage; confidence is the winning score, lowered by a close runner-up."""
    if not aggregated.ranking:
        return aggregated
    scored = sorted(
        ((r, r.confidence * coverage(tree, r.node_id)) for r in aggregated.ranking),
        key=lambda pair: -pair[1],
    )
    (primary, top), margin = scored[0], 1.0
    if len(scored) > 1:
        margin = max(0.0, top - scored[1][1])
    confidence = adjusted_confidence(top, margin)
    uncertainty = aggregated.uncertainty_reason
    if confidence < UNCERTAINTY_THRESHOLD or margin < CLOSE_MARGIN:
        share = coverage(tree, primary.node_id)
        note = _say(
            "vote", language, title=primary.title, score=top, p=primary.confidence, share=share
        )
        uncertainty = f"{note}; {uncertainty}" if uncertainty else note
    ranking = [r for r, _ in scored]
    return _with_primary(aggregated, ranking, confidence, margin, uncertainty, language=language)


def planner_choice(aggregated: Synthesis, worded: Synthesis, language: str = "en") -> Synthesis:
    """Honour the planner's primary if it is a ranked hypothesis, capped by the data."""
    ranking = aggregated.ranking
    chosen = next((r for r in ranking if r.id == worded.primary.id), None)
    if chosen is None or chosen.id == aggregated.primary.id:
        return aggregated
    others = [r.confidence for r in ranking if r.id != chosen.id]
    margin = max(0.0, chosen.confidence - max(others, default=0.0))
    confidence = adjusted_confidence(chosen.confidence, margin)
    primary = aggregated.primary
    note = _say(
        "chose",
        language,
        title=chosen.title,
        p=chosen.confidence,
        other=primary.title,
        p2=primary.confidence,
    )
    reordered = [chosen, *(r for r in ranking if r.id != chosen.id)]
    return _with_primary(aggregated, reordered, confidence, margin, note, language=language)


def _with_primary(
    aggregated: Synthesis,
    ranking: list[RankedHypothesis],
    confidence: float,
    margin: float,
    uncertainty: str | None,
    *,
    language: str,
) -> Synthesis:
    primary = ranking[0]
    if confidence < UNCERTAINTY_THRESHOLD and not uncertainty:
        uncertainty = tree_phrase("weak", language, title=primary.title, p=confidence)
    same = primary.id == aggregated.primary.id
    # Only hypotheses the aggregation found supported (a check confirmed, none refuted)
    # are listed as secondary factors, whichever of them the strategy put first.
    listed = {s.id for s in aggregated.secondary}
    if aggregated.rival is not None and not same:
        listed.add(aggregated.rival.id)
    if not aggregated.by_elimination and not aggregated.not_established:
        listed.add(aggregated.primary.id)
    return aggregated.model_copy(
        update={
            "primary": primary,
            "confidence": confidence,
            "margin": margin,
            "ranking": ranking,
            "secondary": [
                r for r in ranking[1:] if r.confidence >= SECONDARY_MIN and r.id in listed
            ],
            "uncertainty_reason": uncertainty,
            "not_established": primary.confidence < SECONDARY_MIN,
            "by_elimination": aggregated.by_elimination and same,
            "rival": aggregated.rival if same else None,
            "would_settle": aggregated.would_settle if same else [],
        }
    )


def with_unchecked(tree: Tree, synthesis: Synthesis, *, language: str = "en") -> Synthesis:
    """Add "not checked" lines (rejected checks and hypotheses, work cut by a budget),
    their reasons worded in `language`."""
    lines = [
        not_checked_line(where, reason_text(reason, language)) for where, reason in unchecked(tree)
    ]
    if not lines:
        return synthesis
    uncertainty = synthesis.uncertainty_reason
    if synthesis.confidence < UNCERTAINTY_THRESHOLD:
        note = _say("unrun", language, count=len(lines))
        uncertainty = f"{uncertainty}; {note}" if uncertainty else note
    return synthesis.model_copy(
        update={"evidence": [*synthesis.evidence, *lines], "uncertainty_reason": uncertainty}
    )


def unchecked(tree: Tree) -> list[tuple[str, str]]:
    """(where, why) for every check or hypothesis that was rejected or cut by a budget."""
    found = []
    for node in tree.nodes.values():
        if node.node_type == "root" or node.rejection_reason is None:
            continue
        reason = node.rejection_reason
        if reason.startswith(SET_ASIDE):
            continue  # ruled out by its checks at a plan revision, not left unchecked
        cut = reason.startswith((BUDGET_REASON, DEADLINE_REASON))
        if node.status == "rejected" or (node.status == "pruned" and cut):
            found.append((_where(tree, node), reason))
    return found


def _where(tree: Tree, node: Node) -> str:
    parent = tree.nodes.get(node.parent_id or "")
    name = label(node)
    if parent is not None and parent.node_type != "root":
        return f"{label(parent)} / {name}"
    return name
