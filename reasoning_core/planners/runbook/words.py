"""What the runbook planner says: proposals from runbook hypotheses, the gate's
conclusion, recommendations, and the alternative that held (read back from the tree)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Evidence, Language, Synthesis, Tree
from reasoning_core.planners.runbook.checks import STATE_KEY, PlanState
from reasoning_core.ports.planning import HypothesisProposal
from reasoning_core.runbooks import NONE_ID, Check, Hypothesis, Runbook
from reasoning_core.tree.walk import children, descendants, is_active
from reasoning_core.tree.wording import detail_title, gate_conclusion

_P_MIN, _P_MAX = 0.01, 0.99


def child_key(hypothesis_id: str, check: Check) -> str:
    """Key of one alternative of a `combine: any` hypothesis: "technical.availability"."""
    return f"{hypothesis_id}.{check.tags.get('detail') or check.id}"


def detail_of_key(key: str) -> str | None:
    """The alternative named by a child key ("technical.availability" -> "availability")."""
    return key.split(".", 1)[1] if "." in key else None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def hypothesis_proposal(
    runbook: Runbook, hypothesis: Hypothesis, language: Language
) -> HypothesisProposal:
    """A runbook hypothesis as a proposal; `combine: any` ones carry their alternatives."""
    checks = [runbook.check(ref) for ref in hypothesis.checks]
    confirm_if = "; ".join(c.description.get(language) for c in checks)
    alternatives: list[HypothesisProposal] = []
    # One alternative per detail: checks sharing one (the connections' numbers and
    # PostgreSQL's "too many clients" lines) speak for the same mechanism together.
    grouped = list({child_key(hypothesis.id, c): c for c in reversed(checks)}.values())[::-1]
    if hypothesis.combine == "any" and len(grouped) > 1:
        # Each alternative's prior, so that their noisy-OR without evidence is the prior.
        share = 1 - (1 - hypothesis.prior) ** (1 / len(grouped))
        for check in grouped:
            detail = check.tags.get("detail")
            name = (detail_title(detail, language) if detail else None) or check.id
            alternatives.append(
                HypothesisProposal(
                    key=child_key(hypothesis.id, check),
                    title=_cut(name[:1].upper() + name[1:], 200),
                    description=_cut(check.description.get(language), 1000),
                    prior=min(_P_MAX, max(_P_MIN, share)),
                    confirm_if=_cut(check.description.get(language), 500),
                )
            )
    description = hypothesis.description.get(language) if hypothesis.description else ""
    return HypothesisProposal(
        key=hypothesis.id,
        title=_cut(hypothesis.title.get(language), 200),
        description=_cut(description, 1000),
        prior=min(_P_MAX, max(_P_MIN, hypothesis.prior)),
        confirm_if=_cut(confirm_if, 500),
        children=alternatives,
    )


def gate_evidence(
    runbook: Runbook, found: Sequence[tuple[Check, Evidence]], language: Language
) -> Evidence:
    """The `none` conclusion: the gate's title and numbers, as strong as its weakest refutation."""
    assert runbook.gate is not None
    strength = min(evidence.confidence for _, evidence in found)
    lines = [evidence.text for _, evidence in found if evidence.text]
    return Evidence(
        confirmed=True,
        confidence=strength,
        text=gate_conclusion(runbook.gate.title.get(language), lines),
        data={"gate": [check.id for check, _ in found], "runbook": runbook.id},
        has_data=True,
    )


_OTHER_DIRECTION = {
    "found": N_("The data shows a fall, not a {asked}"),
    "not_found": N_("No fall found, and a {asked} is not what this runbook measures"),
}
_ASKED = {
    "rise": N_("rise"),
    "spike": N_("spike"),
}


def other_direction(
    runbook: Runbook, found: Sequence[tuple[Check, Evidence]], asked: str, language: Language
) -> Evidence:
    """The `none` conclusion for a question about a change the runbook does not explain
    (a rise, asked of a drop runbook): what the gate's numbers show instead."""
    fell = any(evidence.confirmed for _, evidence in found)
    key = "found" if fell else "not_found"
    word = gettext(language, _ASKED[asked]) if asked in _ASKED else asked
    title = gettext(language, _OTHER_DIRECTION[key]).format(asked=word)
    lines = [evidence.text for _, evidence in found if evidence.text]
    strength = max((evidence.confidence for _, evidence in found), default=0.5)
    return Evidence(
        confirmed=True,
        confidence=max(strength, 0.6),
        text=gate_conclusion(title, lines),
        data={"gate": [check.id for check, _ in found], "runbook": runbook.id, "asked": asked},
        has_data=bool(found),
    )


def recommendations(runbook: Runbook, synthesis: Synthesis, language: Language) -> list[str]:
    """The primary's recommendations, then the first of each secondary factor's."""
    primary = synthesis.primary.id
    if primary == NONE_ID:
        return list(runbook.gate.recommendations.get(language)) if runbook.gate else []
    out = list(_hypothesis_recommendations(runbook, primary, language))
    for secondary in synthesis.secondary:
        extra = _hypothesis_recommendations(runbook, secondary.id, language)[:1]
        out += [r for r in extra if r not in out]
    return out


def _hypothesis_recommendations(runbook: Runbook, key: str, language: Language) -> list[str]:
    try:
        return list(runbook.hypothesis(key).recommendations.get(language))
    except KeyError:
        return []


def detail_of(tree: Tree, node_id: str | None) -> str | None:
    """The alternative that held under a hypothesis: its most likely active sub-hypothesis.

    None when the hypothesis has no alternatives, or none of them gained over its prior.
    """
    if node_id is None or node_id not in tree.nodes:
        return None
    subs = [n for n in children(tree, node_id) if n.node_type == "hypothesis" and is_active(n)]
    scored = [(n.confidence if n.confidence is not None else n.prior, n) for n in subs]
    if not scored:
        return None
    p, best = max(scored, key=lambda pair: pair[0])
    key = best.context.get("key")
    if p <= best.prior or not isinstance(key, str):
        return None
    return detail_of_key(key)


def named_of(tree: Tree, node_id: str | None, check: str | None = None) -> str | None:
    """What the hypothesis' strongest confirmed check named (a threshold verdict with `by`:
    "process group web", "disk /data"), or None; with `check` (the hypothesis's
    `named_by`), what that check named: the part the hypothesis blames."""
    if node_id is None or node_id not in tree.nodes:
        return None
    named = [
        (n.result.confidence, f"{n.result.data.get('by', '')} {n.result.data['series_name']}")
        for n in descendants(tree, node_id)
        if n.result is not None
        and n.result.confirmed
        and "series_name" in n.result.data
        and (check is None or n.context.get("key") == check)
    ]
    return max(named)[1].strip() if named else None


def state_in_tree(tree: Tree) -> PlanState | None:
    """The plan state stored on the tree's hypotheses (for a call without it in the context)."""
    for node in tree.nodes.values():
        stored = node.context.get("plan_parameters")
        if node.node_type == "hypothesis" and isinstance(stored, dict):
            value = stored.get(STATE_KEY)
            if isinstance(value, dict):
                try:
                    return PlanState.model_validate(value)
                except ValidationError:
                    continue
    return None
