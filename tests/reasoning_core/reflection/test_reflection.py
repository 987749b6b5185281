"""Reflection: checkpoints and the decisions taken from the numbers."""

from __future__ import annotations

from reasoning_core.reflection.checkpoints import (
    contradictions,
    failed_checks,
    failure_of,
    first_level_settled,
    race,
)
from reasoning_core.reflection.decision import RETRY_OF, decide
from reasoning_core.reflection.tracker import CheckpointTracker
from reasoning_core.tree.aggregation import ranking
from reasoning_core.tree.edits import close_node
from tests.reasoning_core.reflection.helpers import (
    Builder,
    ev,
    no_winner_tree,
)

# --- checkpoints -----------------------------------------------------------------------


def test_failures_are_read_from_rejection_reasons_and_empty_results() -> None:
    b = Builder()
    h = b.hyp("technical")
    timeout = b.check(h, "rtwp", reject="sql timeout: canceling statement due to timeout")
    missing = b.check(h, "alarms", reject='sql missing: relation "alarms" does not exist')
    unknown = b.check(h, "probe", reject="unknown tool 'shell' (available: sql)")
    empty = b.check(h, "avail", ev(None, 0.0, "no rows", rows=0))
    thin = b.check(h, "att", ev(None, 0.0, reason="attempts: only 5 comparable samples"))
    veto = b.check(h, "veto", ev(None, 0.0, role="against"))
    fine = b.check(h, "fine", ev(True, 0.9))
    kinds = {f.node_id: f.kind for f in failed_checks(b.tree)}
    assert kinds == {
        timeout: "timeout",
        missing: "missing",
        unknown: "failed",
        empty: "empty",
        thin: "inconclusive",
    }
    assert failure_of(b.tree.nodes[veto]) is None
    assert failure_of(b.tree.nodes[fine]) is None
    pruned = b.check(h, "cut")
    close_node(b.tree, pruned, "pruned", "budget exhausted: max nodes")
    assert failure_of(b.tree.nodes[pruned]) is None


def test_each_failure_fires_once_and_periodic_every_n_checks() -> None:
    b = Builder()
    h = b.hyp("technical")
    b.check(b.hyp("demand"), "open")  # keeps the race open: only A and B fire here
    tracker = CheckpointTracker(every=3)
    b.check(h, "one", ev(True, 0.3))
    b.check(h, "two", reject="sql timeout: too slow")
    first = tracker.observe(b.tree)
    assert [c.trigger for c in first] == ["check_failed"]
    assert "timed out" in first[0].message
    assert tracker.observe(b.tree) == []
    b.check(h, "three", ev(False, 0.3))
    assert [c.trigger for c in tracker.observe(b.tree)] == ["periodic"]
    b.check(h, "four", ev(False, 0.3))
    b.check(h, "five", ev(False, 0.3))
    assert tracker.observe(b.tree) == []
    b.check(h, "six", ev(False, 0.3))
    assert [c.trigger for c in tracker.observe(b.tree)] == ["periodic"]
    off = CheckpointTracker(every=0)
    assert [c.trigger for c in off.observe(b.tree)] == ["check_failed"]


def test_no_winner_only_once_every_first_level_hypothesis_settled() -> None:
    b = no_winner_tree()
    assert first_level_settled(b.tree)
    assert race(b.tree) == "no_winner"
    pending = b.check("h1", "still to run")
    assert race(b.tree) is None
    close_node(b.tree, pending, "pruned", "not run")
    assert race(b.tree) == "no_winner"


def test_close_race_between_two_leaders() -> None:
    b = Builder()
    for key in ("technical", "demand"):
        h = b.hyp(key)
        b.check(h, f"{key} check", ev(True, 0.6))
    (_, p1), (_, p2) = ranking(b.tree)
    assert p1 >= 0.5 and abs(p1 - p2) < 0.15
    assert race(b.tree) == "close_race"
    checkpoints = CheckpointTracker(every=0).observe(b.tree)
    assert [c.trigger for c in checkpoints] == ["close_race"]
    assert CheckpointTracker(every=0).observe(b.tree) != []  # a fresh tracker sees it again


def test_contradiction_needs_strong_evidence_both_ways_under_one_hypothesis() -> None:
    b = Builder()
    demand = b.hyp("demand")
    yes = b.check(demand, "attempts fell", ev(True, 0.8))
    no = b.check(demand, "cell was down", ev(False, 0.7))
    b.check(demand, "weak", ev(False, 0.5))
    found = contradictions(b.tree)
    assert [(c.hypothesis_id, c.confirmed_id, c.refuted_id) for c in found] == [(demand, yes, no)]
    # alternatives (sub-hypotheses) holding and failing are no contradiction
    tech = b.hyp("technical")
    outage, rtwp = b.hyp("outage", parent=tech), b.hyp("interference", parent=tech)
    b.check(outage, "availability", ev(True, 0.9))
    b.check(rtwp, "rtwp", ev(False, 0.9))
    assert [c.hypothesis_id for c in contradictions(b.tree)] == [demand]
    tracker = CheckpointTracker(every=0)
    assert [c.trigger for c in tracker.observe(b.tree)] == ["contradiction"]
    assert tracker.observe(b.tree) == []


# --- decisions from the numbers ----------------------------------------------------------


def test_a_confident_winner_still_retries_a_failed_check_then_continues() -> None:
    b = Builder()
    h = b.hyp("technical")
    b.check(h, "availability", ev(True, 0.95))
    b.check(h, "second", ev(True, 0.9))
    slow = b.check(b.hyp("demand"), "rtwp", reject="sql timeout: slow")
    checkpoints = CheckpointTracker().observe(b.tree)
    first = decide(b.tree, checkpoints, revisions_left=1)
    assert (first.action, [r.node_id for r in first.retries]) == ("retry", [slow])
    decision = decide(b.tree, checkpoints, revisions_left=1, retried={slow})
    assert (decision.action, decision.firm) == ("continue", True)


def test_checks_cut_by_the_early_stop_are_resumed_under_a_confident_leader() -> None:
    b = Builder()
    h = b.hyp("demand")
    b.check(h, "attempts fell", ev(True, 0.97))
    veto = b.check(h, "availability (against)")
    other = b.check(b.hyp("technical"), "availability")
    for node in (veto, other):
        close_node(b.tree, node, "pruned", "stopped early: the root is confident (0.96)")
    decision = decide(b.tree, CheckpointTracker().observe(b.tree), revisions_left=1)
    assert decision.action == "retry" and decision.firm
    assert [(r.node_id, r.how) for r in decision.retries] == [(veto, "resume")]
    done = decide(b.tree, [], revisions_left=1, retried={veto})
    assert done.action == "continue"


def test_failed_checks_are_retried_another_way_once() -> None:
    b = Builder()
    h = b.hyp("technical", prior=0.3)
    slow = b.check(h, "rtwp", reject="sql timeout: slow")
    empty = b.check(h, "availability", ev(None, 0.0, "no rows", rows=0))
    b.check(b.hyp("demand", prior=0.3), "attempts", ev(False, 0.2))
    checkpoints = CheckpointTracker().observe(b.tree)
    decision = decide(b.tree, checkpoints, revisions_left=1)
    assert decision.action == "retry" and decision.firm
    plans = {p.node_id: p for p in decision.retries}
    assert plans[slow].how == "again" and plans[slow].timeout_factor == 2.0
    assert plans[empty].how == "wider_window" and plans[empty].window_factor == 2.0
    again = decide(b.tree, checkpoints, revisions_left=1, retried={slow, empty})
    assert again.action != "retry"
    b.check(h, "rtwp wider", reject="sql timeout: slow", context={RETRY_OF: slow})
    later = decide(
        b.tree, CheckpointTracker().observe(b.tree), revisions_left=0, retried={slow, empty}
    )
    assert later.action == "continue", "a retry is never retried"


def test_no_winner_revises_then_asks_the_user() -> None:
    b = no_winner_tree()
    checkpoints = CheckpointTracker(every=0).observe(b.tree)
    assert [c.trigger for c in checkpoints] == ["no_winner"]
    decision = decide(b.tree, checkpoints, revisions_left=1)
    assert (decision.action, decision.firm) == ("revise", True)
    spent = decide(b.tree, checkpoints, revisions_left=0)
    assert spent.action == "continue"
    assert spent.question and spent.question.endswith("?")


def test_contradiction_widens_the_weaker_check() -> None:
    b = Builder()
    demand = b.hyp("demand")
    b.check(demand, "attempts fell", ev(True, 0.8))
    weaker = b.check(demand, "cell was down", ev(False, 0.65))
    b.check(b.hyp("technical"), "availability", ev(True, 0.3))
    decision = decide(b.tree, CheckpointTracker(every=0).observe(b.tree), revisions_left=1)
    assert decision.action == "retry" and not decision.firm
    assert [(r.node_id, r.how) for r in decision.retries] == [(weaker, "wider_window")]


def test_periodic_checkpoint_with_nothing_conclusive_revises() -> None:
    b = Builder()
    h = b.hyp("technical")
    for name in ("a", "b", "c"):
        b.check(h, name, ev(None, 0.0, "no signal"))
    b.check(h, "open")
    checkpoints = [
        c for c in CheckpointTracker(every=3).observe(b.tree) if c.trigger == "periodic"
    ]
    decision = decide(b.tree, checkpoints, revisions_left=1)
    assert (decision.action, decision.firm) == ("revise", False)
