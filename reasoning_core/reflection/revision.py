"""Plan revisions: how many are left, what the planner is told, and which proposals are refused.

A revision sets the first-level hypotheses the data ruled out aside (they stay
in the tree, rejected with the reason; undecided ones keep competing), tells
the planner "the previous attempt failed because ..." with what was checked,
ruled out and could not be checked, and grows the hypotheses the planner
proposes next. At most MAX_PLAN_REVISIONS per analysis (an attempt counts even
when nothing new comes of it), and a proposal repeating an earlier hypothesis
— the same key or the same title up to case, spacing and punctuation — is
refused, so a revision can never loop back to where it started.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from reasoning_core.models import Tree
from reasoning_core.ports.planning import HypothesisProposal, PlanningContext
from reasoning_core.reflection.checkpoints import WINNER_MIN, failed_checks, race
from reasoning_core.reflection.findings import (
    RULED_OUT_MAX,
    checked_lines,
    missing_lines,
    ruled_out,
)
from reasoning_core.tree.aggregation import CLOSE_MARGIN, ranking
from reasoning_core.tree.edits import normalise
from reasoning_core.tree.synthesis import label

#: MAX_PLAN_REVISIONS: plan revisions allowed in one analysis.
DEFAULT_MAX_PLAN_REVISIONS = 1
#: The words the planner reads before `PlanningContext.previous_failure`.
FAILURE_PREFIX = "the previous attempt failed because"
#: How the rejection reason of a hypothesis set aside by a revision begins.
SET_ASIDE = "set aside by plan revision"
_MAX_FAILURE_CHARS = 1800
_MAX_LINES = 6


class RevisionLedger:
    """Counts the plan revisions of one analysis against MAX_PLAN_REVISIONS."""

    def __init__(self, *, max_revisions: int = DEFAULT_MAX_PLAN_REVISIONS, used: int = 0) -> None:
        self.max_revisions = max(0, max_revisions)
        self.used = max(0, used)

    @property
    def remaining(self) -> int:
        return max(0, self.max_revisions - self.used)

    def take(self) -> bool:
        """Count one revision attempt; False (and nothing counted) when none is left."""
        if self.remaining == 0:
            return False
        self.used += 1
        return True


def tried(tree: Tree) -> tuple[set[str], set[str]]:
    """Keys and normalised titles of every hypothesis the tree ever had."""
    keys, titles = set(), set()
    for node in tree.nodes.values():
        if node.node_type != "hypothesis":
            continue
        key = node.context.get("key")
        if isinstance(key, str) and key:
            keys.add(key)
        titles.add(normalise(label(node)))
    return keys, titles


def screen(
    tree: Tree, proposals: Sequence[HypothesisProposal], *, excluded: Collection[str] = ()
) -> tuple[list[HypothesisProposal], list[tuple[HypothesisProposal, str]]]:
    """(new proposals, refused proposals with the reason): repeats of earlier hypotheses go."""
    keys, titles = tried(tree)
    keys |= set(excluded)
    accepted: list[HypothesisProposal] = []
    refused: list[tuple[HypothesisProposal, str]] = []
    for proposal in proposals:
        title = normalise(proposal.title)
        if proposal.key in keys:
            refused.append((proposal, f"repeats the earlier hypothesis {proposal.key!r}"))
        elif title in titles:
            refused.append((proposal, f"repeats the earlier hypothesis {proposal.title!r}"))
        else:
            accepted.append(proposal)
            keys.add(proposal.key)
            titles.add(title)
    return accepted, refused


def failure_reason(tree: Tree) -> str:
    """Why the plan failed, from the numbers (one clause, no prefix)."""
    ranked = ranking(tree)
    outcome = race(tree)
    if not ranked:
        return "no hypothesis survived"
    (best, p1) = ranked[0]
    if outcome == "no_winner" or p1 < WINNER_MIN:
        return f"no hypothesis reached {WINNER_MIN} (best: {label(best)!r} at {p1:.2f})"
    if outcome == "close_race":
        runner, p2 = ranked[1]
        return (
            f"{label(best)!r} ({p1:.2f}) and {label(runner)!r} ({p2:.2f}) "
            f"stayed within {CLOSE_MARGIN} of each other"
        )
    failed = len(failed_checks(tree))
    if failed:
        return f"{failed} check(s) failed or found no data"
    return "the checks so far were not conclusive"


def failure_text(tree: Tree, *, reason: str | None = None) -> str:
    """`PlanningContext.previous_failure`: the reason, then what was checked, ruled out, missed."""
    parts = [reason or failure_reason(tree)]
    for title, lines in (
        ("Checked", checked_lines(tree)),
        ("Ruled out", ruled_out(tree)),
        ("Could not check", missing_lines(tree)),
    ):
        if lines:
            shown = "; ".join(line[:160] for line in lines[:_MAX_LINES])
            more = f" (and {len(lines) - _MAX_LINES} more)" if len(lines) > _MAX_LINES else ""
            parts.append(f"{title}: {shown}{more}")
    text = ". ".join(parts)
    return text if len(text) <= _MAX_FAILURE_CHARS else text[: _MAX_FAILURE_CHARS - 1] + "…"


def revision_context(
    ctx: PlanningContext, tree: Tree, *, reason: str | None = None
) -> PlanningContext:
    """The planning context of a revision: the failure, and every earlier key excluded."""
    keys, _ = tried(tree)
    return ctx.model_copy(
        update={
            "previous_failure": failure_text(tree, reason=reason),
            "excluded_hypotheses": sorted(set(ctx.excluded_hypotheses) | keys),
        }
    )


def set_aside(tree: Tree, *, revision: int, reason: str) -> list[tuple[str, str]]:
    """(node id, rejection reason) of the first-level hypotheses a revision sets aside.

    Those the data speaks against (p <= RULED_OUT_MAX) go; an undecided one keeps
    competing with the new hypotheses, so a revision that finds nothing better
    still reports the best candidate it had.
    """
    why = f"{SET_ASIDE} {revision}: {reason}"
    return [(node.id, why) for node, p in ranking(tree) if p <= RULED_OUT_MAX]
