"""Reflection checkpoints: moments when an analyst should stop and reconsider. Pure, no I/O.

Four kinds, read from the tree as the explorer left it (ARCHITECTURE.md,
"Reflection and replanning"):

- **check_failed** (A): a check was rejected because its tool failed, timed
  out, was refused or lacked data (the explorer's reason reads
  ``"<tool> <kind>: <error>"``), or it came back with nothing to judge: an
  inconclusive result with no rows, or one the verdict rule called
  inconclusive for lack of samples (``data["reason"]``);
- **periodic** (B): every `DEFAULT_REFLECTION_EVERY` completed checks;
- **no_winner** / **close_race** (C): every first-level hypothesis has settled
  (no check left to run) and none reached `WINNER_MIN`, or the two best are
  within `CLOSE_MARGIN`;
- **contradiction** (D): under one hypothesis a check confirmed and another
  refuted it, each with a strength of at least `CONTRADICTION_MIN`.

`CheckpointTracker` remembers what it already reported, so each failure,
contradiction and settled state triggers one checkpoint, not one per look.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from reasoning_core.models import Evidence, Node, Tree
from reasoning_core.tree.aggregation import CLOSE_MARGIN, EVIDENCE_TYPES, ranking, strength
from reasoning_core.tree.status import is_open_hypothesis
from reasoning_core.tree.synthesis import ESTABLISHED_MIN, label
from reasoning_core.tree.walk import OPEN, children, descendants, is_active

Trigger = Literal["check_failed", "periodic", "no_winner", "close_race", "contradiction"]
#: How a check failed: a tool error kind, "empty" (no rows) or "inconclusive" (too little data).
FailureKind = Literal[
    "refused", "syntax", "missing", "timeout", "unavailable", "failed", "empty", "inconclusive"
]

#: REFLECTION_EVERY: a periodic checkpoint after this many completed checks.
DEFAULT_REFLECTION_EVERY = 3
#: Below this p for the best first-level hypothesis there is no winner.
WINNER_MIN = ESTABLISHED_MIN
#: Evidence at least this strong on both sides of one hypothesis is a contradiction.
CONTRADICTION_MIN = 0.6

_TOOL_FAILURE = re.compile(
    r"^(?P<tool>[\w.-]+) (?P<kind>refused|syntax|missing|timeout|unavailable|failed): "
)
_PLANNING_FAILURE = ("unknown tool", "cannot run this check", "could not interpret")


class FailedCheck(BaseModel):
    """One check that failed or came back with nothing to judge."""

    node_id: str
    hypothesis_id: str
    title: str
    hypothesis: str
    kind: FailureKind
    reason: str
    tool: str | None = None

    @property
    def missing_data(self) -> bool:
        """Did the data source lack what the check needed (as opposed to failing)?"""
        return self.kind in ("missing", "empty", "inconclusive")


class Contradiction(BaseModel):
    """A hypothesis both confirmed and refuted by strong evidence."""

    hypothesis_id: str
    hypothesis: str
    confirmed_id: str
    refuted_id: str
    confirmed_strength: float
    refuted_strength: float


class Checkpoint(BaseModel):
    """One reason to reflect now, with the nodes and numbers behind it."""

    trigger: Trigger
    message: str
    node_ids: list[str] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)


def _is_check(node: Node) -> bool:
    return node.node_type in EVIDENCE_TYPES and not node.context.get("conclusion")


def _tool_of(node: Node) -> str | None:
    tool = node.context.get("tool")
    return tool if isinstance(tool, str) else None


def failure_of(node: Node) -> tuple[FailureKind, str] | None:
    """(kind, reason) when this check failed or found nothing to judge; None otherwise."""
    if not _is_check(node):
        return None
    if node.status == "rejected":
        return _rejection(node.rejection_reason or "rejected")
    result = node.result
    if node.status != "completed" or result is None or result.confirmed is not None:
        return None
    return _nothing_found(result)


def _nothing_found(result: Evidence) -> tuple[FailureKind, str] | None:
    """An inconclusive result that says the data was not there (no rows, too few samples)."""
    if result.data.get("rows") == 0:
        return "empty", result.text or "the check returned no rows"
    reason = result.data.get("reason")
    if isinstance(reason, str) and reason:
        return "inconclusive", reason
    if result.data.get("role") == "against":
        return None  # a veto that did not fire: the expected, healthy outcome
    return "inconclusive", result.text or "the result was inconclusive"


def _rejection(reason: str) -> tuple[FailureKind, str] | None:
    """A rejected check's failure: a tool error, or a check that could not run at all."""
    match = _TOOL_FAILURE.match(reason)
    if match:
        return match.group("kind"), reason  # type: ignore[return-value]
    return ("failed", reason) if reason.startswith(_PLANNING_FAILURE) else None


def _hypothesis_of(tree: Tree, node: Node) -> Node | None:
    current = tree.nodes.get(node.parent_id or "")
    while current is not None and current.node_type != "hypothesis":
        current = tree.nodes.get(current.parent_id or "")
    return current


def failed_checks(tree: Tree) -> list[FailedCheck]:
    """Every check that failed, timed out or returned nothing, in creation order."""
    found = []
    for node in tree.nodes.values():
        failure = failure_of(node)
        hypothesis = _hypothesis_of(tree, node)
        if failure is None or hypothesis is None:
            continue
        kind, reason = failure
        found.append(
            FailedCheck(
                node_id=node.id,
                hypothesis_id=hypothesis.id,
                title=label(node),
                hypothesis=label(hypothesis),
                kind=kind,
                reason=reason,
                tool=_tool_of(node),
            )
        )
    return found


def completed_checks(tree: Tree) -> int:
    """Checks that ended: completed with a result, or rejected (pruned ones never ran)."""
    return sum(
        1
        for n in tree.nodes.values()
        if _is_check(n) and n.node_type == "verification" and n.status in ("completed", "rejected")
    )


def first_level_settled(tree: Tree) -> bool:
    """At least one first-level hypothesis, and none has a check left to run."""
    root = next((n for n in tree.nodes.values() if n.node_type == "root"), None)
    if root is None:
        return False
    first = [n for n in children(tree, root.id) if n.node_type == "hypothesis" and is_active(n)]
    return bool(first) and not any(is_open_hypothesis(tree, n) for n in first)


def race(tree: Tree) -> Trigger | None:
    """The race among first-level hypotheses once settled: no_winner, close_race or None."""
    if not first_level_settled(tree):
        return None
    ranked = ranking(tree)
    if ranked and ranked[0][1] < WINNER_MIN:
        return "no_winner"
    if len(ranked) > 1 and ranked[0][1] - ranked[1][1] < CLOSE_MARGIN:
        return "close_race"
    return None


def contradictions(tree: Tree, *, min_strength: float = CONTRADICTION_MIN) -> list[Contradiction]:
    """Hypotheses whose own checks both confirm and refute them strongly.

    Only checks directly under one hypothesis count: sub-hypotheses are
    alternatives, so one holding and another failing is no contradiction.
    """
    found = []
    for hypothesis in tree.nodes.values():
        if hypothesis.node_type != "hypothesis" or not is_active(hypothesis):
            continue
        confirmed, refuted = _strongest(tree, hypothesis, min_strength)
        if confirmed is not None and refuted is not None:
            found.append(
                Contradiction(
                    hypothesis_id=hypothesis.id,
                    hypothesis=label(hypothesis),
                    confirmed_id=confirmed[0].id,
                    refuted_id=refuted[0].id,
                    confirmed_strength=confirmed[1],
                    refuted_strength=refuted[1],
                )
            )
    return found


def _strongest(
    tree: Tree, hypothesis: Node, min_strength: float
) -> tuple[tuple[Node, float] | None, tuple[Node, float] | None]:
    best: dict[bool, tuple[Node, float]] = {}
    for check in children(tree, hypothesis.id):
        result = check.result
        if not _is_check(check) or not is_active(check) or result is None:
            continue
        if result.confirmed is None or (c := strength(result)) < min_strength:
            continue
        if result.confirmed not in best or c > best[result.confirmed][1]:
            best[result.confirmed] = (check, c)
    return best.get(True), best.get(False)


def open_checks(tree: Tree) -> int:
    """Checks still waiting to run (pending or in progress)."""
    return sum(
        1 for n in tree.nodes.values() if _is_check(n) and is_active(n) and n.status in OPEN
    )


def checks_of(tree: Tree, hypothesis_id: str) -> list[Node]:
    """Every check anywhere under a hypothesis, whatever its status."""
    return [n for n in descendants(tree, hypothesis_id) if _is_check(n)]
