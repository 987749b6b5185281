"""What to do at a reflection checkpoint, decided from the tree's numbers. Pure, no I/O.

Three actions: **continue**, **retry** (run a check again another way: the
same request with more time, or a wider time window; the critique may add an
alternative query) and **revise** (set the failed plan aside and grow new
hypotheses). The rules, first match wins:

1. failed checks that may be retried: retry them (timeouts and unreachable
   sources again with more time, empty or thin results with a wider window),
   even under a confident leader, since a check that found nothing may be the
   one that would have vetoed it;
2. checks the explorer's early stop cut before they ran: while the leader is
   confident (adjusted confidence >= 0.7, margin >= 0.15) its own (they may be
   its vetoes), once it is not every one ("resume"); a fully checked confident
   leader: continue;
3. the first level settled without a winner: revise while revisions are
   left, otherwise continue and suggest a clarifying question;
4. a contradiction: retry its weaker side with a wider window;
5. a close race: retry the thin checks of the two leaders with a wider window;
6. a periodic checkpoint where nothing so far was conclusive: revise;
7. otherwise continue.

Rules 1-3 are *firm*: a critique from the LLM cannot overturn them (see
reflection_critique). Each check is retried at most once, and a retry is
never retried, so failing checks end in the "not established" report
instead of a loop.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import UNCERTAINTY_THRESHOLD, Tree
from reasoning_core.reflection.checkpoints import (
    Checkpoint,
    Contradiction,
    FailedCheck,
    Trigger,
    completed_checks,
    contradictions,
    failed_checks,
    race,
)
from reasoning_core.reflection.findings import clarifying_question
from reasoning_core.tree.aggregation import CLOSE_MARGIN, margin_of, ranking, root_confidence
from reasoning_core.tree.synthesis import label
from reasoning_core.tree.walk import ancestors

Action = Literal["continue", "retry", "revise"]
RetryHow = Literal["again", "wider_window", "alternative_query", "resume"]
DecisionSource = Literal["numbers", "critique"]

#: A check that found too little data is retried over a window this many times longer.
WIDEN_FACTOR = 2.0
#: A check that timed out or could not reach its source is retried with this much more time.
TIMEOUT_FACTOR = 2.0
#: Context key marking a check node as the retry of another (it is never retried itself).
RETRY_OF = "retry_of"
#: How the explorer's reason for pruning work after an early stop begins.
EARLY_STOP = "stopped early"
#: A hypothesis at or below this p is ruled out: its failed checks are not worth a retry.
_RULED_OUT = 0.2
_AGAIN: frozenset[str] = frozenset({"timeout", "unavailable"})
_WIDER: frozenset[str] = frozenset({"empty", "inconclusive"})

#: A decision's reason, in the analysis's language (it is shown as live progress).
_REASONS: dict[str, str] = {
    "retry": N_("retry {what}"),
    "again": N_("{id} again with more time"),
    "wider": N_("{id} over a wider window"),
    "unrun": N_("the early stop skipped checks that may still decide it: run {count}"),
    "confident": N_("the leader is confident ({p:.2f})"),
    "best": N_("best {title!r} at {p:.2f}"),
    "none": N_("no hypothesis"),
    "no_winner": N_("no hypothesis reached 0.5 ({best})"),
    "no_winner_last": N_("no hypothesis reached 0.5 ({best}) and no revision is left"),
    "contradiction": N_("contradicting evidence: widen the weaker check"),
    "close": N_("two leaders are close: widen their thin checks"),
    "nothing": N_("none of {count} checks was conclusive"),
    "on_track": N_("the plan is on track"),
}


def _reason(key: str, language: str, **values: object) -> str:
    return gettext(language, _REASONS[key]).format(**values)


class RetryPlan(BaseModel):
    """Run one check again another way; the explorer and the planner act on it."""

    node_id: str
    hypothesis_id: str
    how: RetryHow
    reason: str = Field(max_length=500)
    #: > 1: the recent window starts this many window lengths earlier.
    window_factor: float = Field(default=1.0, ge=1.0, le=10.0)
    #: > 1: the tool gets this many times its timeout.
    timeout_factor: float = Field(default=1.0, ge=1.0, le=10.0)
    #: An alternative query for the same tool (from the critique).
    query: str | None = Field(default=None, max_length=4000)


class Decision(BaseModel):
    """The outcome of one reflection."""

    action: Action
    reason: str
    triggers: list[Trigger] = Field(default_factory=list)
    retries: list[RetryPlan] = Field(default_factory=list)
    #: A question for the user when the data cannot settle it ("ask the user").
    question: str | None = None
    source: DecisionSource = "numbers"
    #: Decided by numbers the critique may not overturn.
    firm: bool = False
    #: The critique's own reason, when one was given (followed or not).
    critique: str | None = None


def already_retried(tree: Tree, retried: Collection[str] = ()) -> set[str]:
    """Checks retried so far: those given, and those a retry in the tree names (after a
    restart the tree is all there is)."""
    named = {n.context.get(RETRY_OF) for n in tree.nodes.values()}
    return {*retried, *(r for r in named if isinstance(r, str))}


def retryable(tree: Tree, failure: FailedCheck, retried: Collection[str]) -> bool:
    """May this check still be retried (once, never a retry itself, not under a ruled-out
    hypothesis)?"""
    node = tree.nodes.get(failure.node_id)
    if node is None or failure.node_id in retried or node.context.get(RETRY_OF):
        return False
    hypothesis = tree.nodes.get(failure.hypothesis_id)
    p = hypothesis.confidence if hypothesis is not None else None
    if (
        hypothesis is not None
        and p is not None
        and p <= _RULED_OUT
        and p < hypothesis.prior - 0.01
    ):
        return False  # other evidence already pushed its hypothesis out
    return failure.kind in _AGAIN | _WIDER


def retry_plan(failure: FailedCheck, *, how: RetryHow | None = None) -> RetryPlan:
    """The default way to retry a failed check: more time, or a wider window."""
    chosen: RetryHow = how or ("again" if failure.kind in _AGAIN else "wider_window")
    return RetryPlan(
        node_id=failure.node_id,
        hypothesis_id=failure.hypothesis_id,
        how=chosen,
        reason=f"{failure.title}: {failure.reason}"[:500],
        window_factor=WIDEN_FACTOR if chosen == "wider_window" else 1.0,
        timeout_factor=TIMEOUT_FACTOR if chosen == "again" else 1.0,
    )


def confident_winner(tree: Tree) -> bool:
    """The root is confident and its primary is clear of the runner-up."""
    ranked = ranking(tree)
    return (
        bool(ranked)
        and root_confidence(tree) >= UNCERTAINTY_THRESHOLD
        and margin_of(ranked) >= CLOSE_MARGIN
    )


def decide(
    tree: Tree,
    checkpoints: Sequence[Checkpoint],
    *,
    revisions_left: int,
    retried: Collection[str] = (),
    language: str = "en",
) -> Decision:
    """The numbers' decision at a checkpoint (see the module docstring for the rules)."""
    retried = already_retried(tree, retried)
    triggers = list(dict.fromkeys(c.trigger for c in checkpoints))
    failures = [f for f in failed_checks(tree) if retryable(tree, f, retried)]
    if failures and ("check_failed" in triggers or race(tree) == "no_winner"):
        # Even under a confident leader: a check that found nothing may hold its veto.
        plans = [retry_plan(f) for f in failures]
        return Decision(
            action="retry",
            reason=_retry_reason(plans, language),
            triggers=triggers,
            retries=plans,
            firm=True,
        )
    unrun = _unrun(tree, retried, leader_only=confident_winner(tree))
    if unrun:
        return Decision(
            action="retry",
            reason=_reason("unrun", language, count=len(unrun)),
            triggers=triggers,
            retries=unrun,
            firm=True,
        )
    if confident_winner(tree):
        p = root_confidence(tree)
        return Decision(
            action="continue",
            reason=_reason("confident", language, p=p),
            triggers=triggers,
            firm=True,
        )
    if race(tree) == "no_winner":
        return _no_winner(tree, triggers, revisions_left, language)
    soft = _soft_rules(tree, triggers, retried, revisions_left, language)
    on_track = _reason("on_track", language)
    return soft or Decision(action="continue", reason=on_track, triggers=triggers)


def _no_winner(
    tree: Tree, triggers: list[Trigger], revisions_left: int, language: str
) -> Decision:
    ranked = ranking(tree)
    best = (
        _reason("best", language, title=ranked[0][0].title, p=ranked[0][1])
        if ranked
        else _reason("none", language)
    )
    if revisions_left > 0:
        return Decision(
            action="revise",
            reason=_reason("no_winner", language, best=best),
            triggers=triggers,
            firm=True,
        )
    return Decision(
        action="continue",
        reason=_reason("no_winner_last", language, best=best),
        triggers=triggers,
        question=clarifying_question(tree, language=language),
        firm=True,
    )


def _soft_rules(
    tree: Tree,
    triggers: list[Trigger],
    retried: Collection[str],
    revisions_left: int,
    language: str,
) -> Decision | None:
    if "contradiction" in triggers:
        weaker = [_weaker_side(c) for c in contradictions(tree)]
        plans = [p for n in weaker if (p := _widen(tree, n, retried, "contradicting evidence"))]
        if plans:
            return Decision(
                action="retry",
                reason=_reason("contradiction", language),
                triggers=triggers,
                retries=plans,
            )
    if "close_race" in triggers:
        leaders = {n.id for n, _ in ranking(tree)[:2]}
        plans = [
            retry_plan(f, how="wider_window")
            for f in failed_checks(tree)
            if retryable(tree, f, retried) and leaders & {a.id for a in ancestors(tree, f.node_id)}
        ]
        if plans:
            return Decision(
                action="retry",
                reason=_reason("close", language),
                triggers=triggers,
                retries=plans,
            )
    if "periodic" in triggers and revisions_left > 0 and _nothing_conclusive(tree):
        done = completed_checks(tree)
        return Decision(
            action="revise", reason=_reason("nothing", language, count=done), triggers=triggers
        )
    return None


def _unrun(tree: Tree, retried: Collection[str], *, leader_only: bool) -> list[RetryPlan]:
    """Checks the early stop cut before they ran: the leader's own (its possible vetoes)
    while it is confident, every one once it is not."""
    ranked = ranking(tree)
    leader = ranked[0][0].id if ranked else ""
    return [
        RetryPlan(
            node_id=n.id,
            hypothesis_id=n.parent_id or "",
            how="resume",
            reason=f"{label(n)}: {n.rejection_reason}"[:500],
        )
        for n in tree.nodes.values()
        if n.node_type == "verification"
        and n.status == "pruned"
        and (n.rejection_reason or "").startswith(EARLY_STOP)
        and n.id not in retried
        and not n.context.get(RETRY_OF)
        and (not leader_only or leader in {a.id for a in ancestors(tree, n.id)})
    ]


def _weaker_side(c: Contradiction) -> str:
    """The check with the weaker evidence: the one to look at again."""
    return c.refuted_id if c.refuted_strength <= c.confirmed_strength else c.confirmed_id


def _widen(tree: Tree, node_id: str, retried: Collection[str], why: str) -> RetryPlan | None:
    """A wider-window retry of a check that ran, unless it was (or is) a retry already."""
    node = tree.nodes.get(node_id)
    if node is None or node_id in retried or node.context.get(RETRY_OF):
        return None
    parent = tree.nodes.get(node.parent_id or "")
    return RetryPlan(
        node_id=node_id,
        hypothesis_id=parent.id if parent is not None else "",
        how="wider_window",
        reason=f"{label(node)}: {why}"[:500],
        window_factor=WIDEN_FACTOR,
    )


def _nothing_conclusive(tree: Tree) -> bool:
    done = [
        n
        for n in tree.nodes.values()
        if n.node_type == "verification" and n.status == "completed" and n.result is not None
    ]
    return bool(done) and all(n.result is None or n.result.confirmed is None for n in done)


def _retry_reason(plans: Sequence[RetryPlan], language: str) -> str:
    parts = [
        _reason("again" if p.how == "again" else "wider", language, id=p.node_id) for p in plans
    ]
    return _reason("retry", language, what=", ".join(parts))
