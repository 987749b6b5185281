"""Issue 37: one scale in the report, and no cause established by elimination.

Trees are built with the real pure edits, as in test_aggregation.py; the report is the
real `build_report` and the merge the real strategies."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reasoning_core.explore.merge import merge
from reasoning_core.models import Evidence, Tree
from reasoning_core.tree.aggregation import ELIMINATION_MAX, MEASURES
from reasoning_core.tree.edits import NewNode, add_node, set_result
from reasoning_core.tree.report import build_report, render_report_text, shown_confidence
from reasoning_core.tree.synthesis import ESTABLISHED_MIN, synthesize
from reasoning_core.tree.wording import render_report
from tests.reasoning_core.tree.test_aggregation import (
    NOW,
    Spec,
    add,
    build,
    check,
    new_tree,
    p,
    tree_specs,
)


def found(confirmed: bool | None, c: float, **data: object) -> Evidence:
    return Evidence(confirmed=confirmed, confidence=c, has_data=True, text=f"c={c}", data=data)


def _number(line: str) -> float:
    return float(line.rsplit("(", 1)[1].rstrip(")"))


@given(tree_specs, st.sampled_from(["best_first", "weighted_vote"]))
def test_no_secondary_shows_a_higher_number_than_the_primary(spec: Spec, strategy: str) -> None:
    tree = build(spec)
    synthesis = merge(strategy, tree, synthesize(tree), None)  # type: ignore[arg-type]
    report = build_report(synthesis)
    shown = shown_confidence(synthesis)
    for line in report.secondary:
        assert _number(line) <= round(shown, 2), (line, shown)  # as both are shown


def test_a_secondary_its_own_check_refuted_is_not_listed() -> None:
    """Issue 37's fourth fault: "the process group eats CPU (0.50)" first, and below it
    "restarted (0.93)" whose own check read "refuted: restarts in 2 min max 0"."""
    tree = new_tree()
    cpu = add(tree, "root", "hypothesis")
    restarted = add(tree, "root", "hypothesis")
    check(tree, cpu, found(True, 0.9))
    check(tree, restarted, found(True, 0.6))
    check(tree, restarted, found(False, 0.3))
    synthesis = synthesize(tree)
    assert synthesis.secondary == [] and synthesis.rival is None
    assert p(tree, restarted) >= ESTABLISHED_MIN  # likely by its numbers, yet refuted once


def test_a_close_race_is_said_as_one_with_what_tells_them_apart() -> None:
    tree = new_tree()
    cpu = add(tree, "root", "hypothesis")
    memory = add(tree, "root", "hypothesis")
    check(tree, cpu, found(True, 0.8))
    check(tree, memory, found(True, 0.78))
    check(tree, memory, found(None, 0.0))
    report = build_report(synthesize(tree))
    assert report.rival and report.secondary == []
    text = render_report_text(report)
    assert text.startswith(f"Two causes fit about equally: {report.primary} and {report.rival}")
    assert "What would tell them apart: " in text and "(still open)" in text
    assert "Две причины подходят примерно одинаково" in render_report(report, "ru")


def test_a_cause_no_check_measures_is_only_possible() -> None:
    """Issue 37's second fault: "a slow network path" confirmed by PostgreSQL looking idle
    and a proxy process existing; nothing measured the path."""
    tree = new_tree()
    path = add(tree, "root", "hypothesis", prior=0.2)
    database = add(tree, "root", "hypothesis", prior=0.35)
    check(tree, path, found(True, 0.9, **{MEASURES: False}))  # PostgreSQL idle
    check(tree, path, found(True, 0.9, **{MEASURES: False}))  # a proxy process exists
    check(tree, database, found(False, 0.9))
    assert p(tree, path) == ELIMINATION_MAX
    synthesis = synthesize(tree)
    assert synthesis.primary.node_id == path and synthesis.by_elimination
    assert synthesis.not_established and synthesis.secondary == []
    assert synthesis.uncertainty_reason and "ruled out" in synthesis.uncertainty_reason
    text = render_report_text(build_report(synthesis))
    assert text.startswith("Possible cause (the others were ruled out): ")
    assert "What would confirm it: " in text and "measures" in text
    # One confirmed check that measures the path establishes it.
    check(tree, path, found(True, 0.6))
    synthesis = synthesize(tree)
    assert p(tree, path) > ESTABLISHED_MIN and not synthesis.by_elimination
    assert render_report_text(build_report(synthesis)).startswith("Primary cause: ")


def test_a_veto_that_did_not_veto_establishes_nothing() -> None:
    tree = new_tree()
    h = add(tree, "root", "hypothesis", prior=0.6)
    check(tree, h, found(False, 0.2, role="against"))
    assert p(tree, h) <= ELIMINATION_MAX


def _keyed_check(tree: Tree, hypothesis: str, key: str, evidence: Evidence) -> None:
    """A check as a planner adds it: its key in the node's context, the same key for the
    same check under two hypotheses."""
    new = NewNode(hypothesis, key, "verification", context={"check": {"key": key}})
    node, _ = add_node(tree, new, max_depth=10, now=NOW)
    set_result(tree, node.id, evidence)


def test_a_secondary_factor_needs_a_finding_of_its_own_not_the_symptom_it_shares() -> None:
    """The twelfth question holdout's killed web service: "the process is down (0.99)" and
    beside it "another program answers on the target's port (0.80)", confirmed only by the
    "up 0" both were checked on; its own check (the scrape's error) never said so."""
    tree = new_tree()
    down = add(tree, "root", "hypothesis", prior=0.4)
    other_program = add(tree, "root", "hypothesis", prior=0.3)
    restarts = add(tree, "root", "hypothesis", prior=0.1)
    for hypothesis in (down, other_program, restarts):
        _keyed_check(tree, hypothesis, "target_down", found(True, 0.81))
    _keyed_check(tree, down, "scrape_refused", found(True, 0.9))
    _keyed_check(tree, other_program, "scrape_not_metrics", found(None, 0.0))
    _keyed_check(tree, restarts, "restart_count", found(True, 0.3))
    synthesis = synthesize(tree)
    assert synthesis.primary.node_id == down
    assert p(tree, other_program) >= ESTABLISHED_MIN  # likely by its numbers alone
    assert [entry.node_id for entry in synthesis.secondary] == [restarts], (
        synthesis.ranking,
        synthesis.secondary,
    )
