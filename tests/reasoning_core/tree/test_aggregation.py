"""Aggregation: property tests of the semantics, exact numbers for worked examples.

Trees are built with the real pure edits (`reasoning_core.tree.edits`), so the
incremental recomputation they do is what the properties check.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasoning_core.models import Evidence, Node, NodeType, Tree
from reasoning_core.tree.aggregation import (
    ELIMINATION_MAX,
    NO_DATA_CAP,
    K,
    ceiling,
    logit,
    recompute_ancestors,
    sigmoid,
    strength,
    uncapped_confidence,
    weight,
)
from reasoning_core.tree.edits import NewNode, add_node, close_node, set_result
from reasoning_core.tree.synthesis import synthesize
from reasoning_core.tree.walk import ancestors, is_active
from tests.reasoning_core.tree.full_recompute import recompute_all

NOW = datetime(2024, 5, 6, 12, 0, tzinfo=UTC)

evidences = st.builds(
    Evidence,
    confirmed=st.sampled_from([True, False, None]),
    confidence=st.floats(0.0, 1.0),
    has_data=st.booleans(),
)
priors = st.floats(0.0, 1.0)
closing: st.SearchStrategy[Closing] = st.sampled_from(
    ["completed", "completed", "rejected", "pruned"]
)
sub_specs = st.tuples(priors, st.lists(evidences, max_size=3))
hypothesis_specs = st.tuples(
    priors,
    st.lists(st.tuples(evidences, closing), max_size=4),
    st.lists(sub_specs, max_size=2),
    st.booleans(),  # rejected as a whole?
)
tree_specs = st.lists(hypothesis_specs, min_size=1, max_size=4)
#: (prior, [(check evidence, closing status)], [(sub prior, [sub evidence])], rejected)
Closing = Literal["completed", "rejected", "pruned"]
Spec = list[tuple[float, list[tuple[Evidence, Closing]], list[tuple[float, list[Evidence]]], bool]]


def new_tree() -> Tree:
    root = Node(id="root", tree_id="t", node_type="root", description="why?")
    return Tree(id="t", task="why?", nodes={"root": root})


def add(tree: Tree, parent: str, node_type: NodeType, *, prior: float = 0.5) -> str:
    new = NewNode(parent, f"{node_type} #{len(tree.nodes)}", node_type, prior=prior)
    node, _ = add_node(tree, new, max_depth=10, now=NOW)
    return node.id


def add_keyed(tree: Tree, title: str, context: dict[str, object]) -> Node:
    """A hypothesis under the root with a planner's context (its key, its ceiling)."""
    node, _ = add_node(
        tree, NewNode("root", title, "hypothesis", context=context), max_depth=5, now=NOW
    )
    return node


def check(tree: Tree, hypothesis: str, evidence: Evidence, status: Closing = "completed") -> str:
    node_id = add(tree, hypothesis, "verification")
    set_result(tree, node_id, evidence)
    if status != "completed":
        close_node(tree, node_id, status, "test")
    return node_id


def p(tree: Tree, node_id: str) -> float:
    value = tree.nodes[node_id].confidence
    assert value is not None
    return value


def build(spec: Spec) -> Tree:
    tree = new_tree()
    for prior, checks, subs, rejected in spec:
        h = add(tree, "root", "hypothesis", prior=prior)
        for evidence, status in checks:
            check(tree, h, evidence, status)
        for sub_prior, sub_checks in subs:
            s = add(tree, h, "hypothesis", prior=sub_prior)
            for evidence in sub_checks:
                check(tree, s, evidence)
        if rejected:
            close_node(tree, h, "rejected", "test")
    return tree


def hypothesis_ids(tree: Tree) -> list[str]:
    return [n.id for n in tree.nodes.values() if n.node_type == "hypothesis" and is_active(n)]


def single(prior: float, evidence: list[Evidence], *, capped: bool = True) -> float:
    """p of one hypothesis with these checks (`capped=False`: without the cap of a cause
    no confirmed check measures)."""
    tree = new_tree()
    h = add(tree, "root", "hypothesis", prior=prior)
    for e in evidence:
        check(tree, h, e)
    return p(tree, h) if capped else uncapped_confidence(tree, tree.nodes[h])


# --- properties --------------------------------------------------------------------


@given(tree_specs)
def test_every_confidence_stays_within_0_and_1(spec: Spec) -> None:
    tree = build(spec)
    for node in tree.nodes.values():
        assert node.confidence is None or 0.0 <= node.confidence <= 1.0
    synthesis = synthesize(tree)
    assert 0.0 <= synthesis.confidence <= 1.0
    assert 0.0 <= synthesis.margin <= 1.0


@given(tree_specs)
def test_incremental_updates_agree_with_a_full_recomputation(spec: Spec) -> None:
    tree = build(spec)
    full = tree.model_copy(deep=True)
    recompute_all(full)
    for node_id, node in tree.nodes.items():
        assert node.confidence == pytest.approx(full.nodes[node_id].confidence, abs=1e-12)


@given(tree_specs, st.data(), st.floats(0.0, 1.0), st.booleans())
def test_a_confirming_check_never_lowers_any_hypothesis(
    spec: Spec,
    data: st.DataObject,
    c: float,
    has_data: bool,
) -> None:
    tree = build(spec)
    targets = hypothesis_ids(tree)
    if not targets:
        return
    target = data.draw(st.sampled_from(targets))
    before = {h: p(tree, h) for h in hypothesis_ids(tree)}
    check(tree, target, Evidence(confirmed=True, confidence=c, has_data=has_data))
    for h, value in before.items():
        assert p(tree, h) >= value - 1e-12, h
    assert p(tree, target) >= before[target]


def unmeasured_cap(p: float, evidence: list[Evidence]) -> float:
    """p as aggregation holds it: below "established" when checks spoke and none confirmed."""
    spoke = any(e.confirmed is not None for e in evidence)
    return min(p, ELIMINATION_MAX) if spoke and not any(e.confirmed for e in evidence) else p


@given(st.lists(evidences, max_size=6))
def test_refutation_mirrors_confirmation_at_even_prior(evidence: list[Evidence]) -> None:
    """The mirror holds below the cap of a hypothesis no confirmed check measures."""
    flipped = [
        e.model_copy(update={"confirmed": None if e.confirmed is None else not e.confirmed})
        for e in evidence
    ]
    assert single(0.5, flipped) == pytest.approx(
        unmeasured_cap(1.0 - single(0.5, evidence, capped=False), flipped), abs=1e-9
    )
    assert single(0.5, evidence, capped=False) + single(0.5, flipped, capped=False) == (
        pytest.approx(1.0, abs=1e-9)
    )


@given(st.floats(0.0, 1.0), st.booleans())
def test_one_refutation_is_one_minus_one_confirmation(c: float, has_data: bool) -> None:
    confirm = single(0.5, [Evidence(confirmed=True, confidence=c, has_data=has_data)])
    refute = single(0.5, [Evidence(confirmed=False, confidence=c, has_data=has_data)])
    assert refute == pytest.approx(min(ELIMINATION_MAX, 1.0 - confirm), abs=1e-12)


@given(tree_specs, st.data(), evidences, st.sampled_from(["inconclusive", "rejected", "pruned"]))
def test_rejected_pruned_and_inconclusive_checks_change_nothing(
    spec: Spec,
    data: st.DataObject,
    evidence: Evidence,
    kind: Closing | Literal["inconclusive"],
) -> None:
    tree = build(spec)
    targets = hypothesis_ids(tree)
    if not targets:
        return
    target = data.draw(st.sampled_from(targets))
    before = {n.id: n.confidence for n in tree.nodes.values() if n.node_type != "verification"}
    if kind == "inconclusive":
        check(tree, target, evidence.model_copy(update={"confirmed": None}))
    else:
        check(tree, target, evidence, kind)
    after = {n.id: n.confidence for n in tree.nodes.values() if n.node_type != "verification"}
    assert after == before


@given(tree_specs)
def test_the_primary_is_always_the_highest_hypothesis(spec: Spec) -> None:
    tree = build(spec)
    synthesis = synthesize(tree)
    competing = {
        n.id: p(tree, n.id) for n in tree.nodes.values() if n.parent_id == "root" and is_active(n)
    }
    if not competing:
        assert synthesis.not_established and synthesis.primary.node_id is None
        return
    best = max(competing.values())
    assert synthesis.primary.confidence == best
    assert competing[synthesis.primary.node_id or ""] == best
    assert [r.confidence for r in synthesis.ranking] == sorted(competing.values(), reverse=True)
    assert synthesis.confidence <= best
    assert synthesis.not_established == (best < 0.5)
    assert all(
        s.confidence >= 0.5 and s.node_id != synthesis.primary.node_id for s in synthesis.secondary
    )
    if synthesis.confidence < 0.7:
        assert synthesis.uncertainty_reason


@given(st.floats(0.0, 1.0), st.sampled_from([True, False, None]))
def test_a_judgement_without_data_is_capped_at_one_half(c: float, confirmed: bool | None) -> None:
    no_data = Evidence(confirmed=confirmed, confidence=c, has_data=False)
    assert strength(no_data) <= NO_DATA_CAP
    capped = Evidence(confirmed=confirmed, confidence=min(c, NO_DATA_CAP), has_data=True)
    assert single(0.5, [no_data]) == single(0.5, [capped])


@settings(max_examples=50)
@given(tree_specs, st.data())
def test_recompute_touches_exactly_the_node_and_its_ancestors(
    spec: Spec,
    data: st.DataObject,
) -> None:
    tree = build(spec)
    node_id = data.draw(st.sampled_from(sorted(tree.nodes)))
    for node in tree.nodes.values():
        node.confidence = 0.123  # a marker: only recomputed nodes lose it
    ids = recompute_ancestors(tree, node_id)
    expected = [node_id, *(a.id for a in ancestors(tree, node_id))]
    assert ids == expected
    untouched = {n.id for n in tree.nodes.values() if n.confidence == 0.123}
    assert untouched >= set(tree.nodes) - set(expected)


# --- worked examples ---------------------------------------------------------------


def data(confirmed: bool | None, c: float) -> Evidence:
    return Evidence(confirmed=confirmed, confidence=c, has_data=True, text=f"c={c}")


def test_three_competing_hypotheses_exact_numbers() -> None:
    tree = new_tree()
    h1 = add(tree, "root", "hypothesis")
    h2 = add(tree, "root", "hypothesis")
    h3 = add(tree, "root", "hypothesis", prior=0.3)
    check(tree, h1, data(True, 0.9))
    check(tree, h1, data(True, 0.6))
    check(tree, h2, data(False, 0.8))
    check(tree, h3, data(True, 0.3))
    check(tree, h3, data(None, 0.9))

    assert K == 2.0  # weight(s) = 2 * atanh(s); at prior 0.5 one check gives (1 + c) / 2
    assert p(tree, h1) == pytest.approx(0.9870129870129871)  # sigmoid(w(.9) + w(.6))
    assert p(tree, h2) == pytest.approx(0.1)  # sigmoid(-w(.8)) = (1 - .8) / 2
    assert p(tree, h3) == pytest.approx(0.4431818181818182)  # sigmoid(logit(.3) + w(.3))

    s = synthesize(tree)
    assert s.primary.node_id == h1 == "h1"
    assert [r.node_id for r in s.ranking] == ["h1", "h3", "h2"]
    assert s.margin == pytest.approx(0.543831168831169)
    assert s.confidence == pytest.approx(0.9870129870129871)
    assert s.secondary == []
    assert not s.not_established
    assert s.uncertainty_reason is None
    assert len(s.evidence) == 2 and s.evidence[0].startswith("confirmed: c=0.9 (0.90) — ")
    assert tree.nodes["root"].confidence == pytest.approx(s.confidence)


def test_a_close_runner_up_lowers_confidence_and_says_why() -> None:
    tree = new_tree()
    h1 = add(tree, "root", "hypothesis")
    h2 = add(tree, "root", "hypothesis")
    check(tree, h1, data(True, 0.5))
    check(tree, h2, data(True, 0.45))

    s = synthesize(tree)
    assert s.primary.node_id == h1
    # p1 = (1 + .5) / 2 = .75, p2 = (1 + .45) / 2 = .725
    assert s.margin == pytest.approx(0.025)
    # confidence = p1 * (0.5 + margin / 0.3)
    assert s.confidence == pytest.approx(0.75 * (0.5 + 0.025 / 0.3))
    assert s.confidence == pytest.approx(0.4375)
    # A close race is said as one: the runner-up is the rival, not a secondary factor.
    assert s.rival is not None and s.rival.node_id == h2 and s.secondary == []
    assert s.would_settle and "not the other" in s.would_settle[-1]
    assert not s.not_established
    assert s.uncertainty_reason and "runner-up" in s.uncertainty_reason


def test_a_tie_halves_the_confidence_and_a_margin_of_015_leaves_it() -> None:
    tree = new_tree()
    h1, h2 = add(tree, "root", "hypothesis"), add(tree, "root", "hypothesis")
    check(tree, h1, data(True, 0.8))
    check(tree, h2, data(True, 0.8))
    s = synthesize(tree)
    assert s.primary.node_id == h1  # ties go to the first created
    assert s.confidence == pytest.approx(p(tree, h1) / 2)

    tree = new_tree()
    h1 = add(tree, "root", "hypothesis", prior=0.65)
    add(tree, "root", "hypothesis", prior=0.5)
    s = synthesize(tree)
    assert s.margin == pytest.approx(0.15)
    assert s.confidence == pytest.approx(0.65)


def test_nothing_reaching_one_half_is_not_established() -> None:
    tree = new_tree()
    h1, h2 = add(tree, "root", "hypothesis"), add(tree, "root", "hypothesis")
    check(tree, h1, data(False, 0.2))
    check(tree, h2, data(False, 0.9))
    check(tree, h1, Evidence(confirmed=None, confidence=0.7))
    s = synthesize(tree)
    assert s.not_established
    assert s.primary.node_id == h1
    assert s.confidence == pytest.approx((1 - 0.2) / 2)  # refuted at 0.2, prior 0.5
    assert s.uncertainty_reason is not None
    assert "no hypothesis reached 0.5" in s.uncertainty_reason
    assert "1 of 2 checks of the primary were inconclusive" in s.uncertainty_reason


def test_a_data_less_primary_is_explained() -> None:
    tree = new_tree()
    h1 = add(tree, "root", "hypothesis", prior=0.4)
    check(tree, h1, Evidence(confirmed=True, confidence=0.95, has_data=False))
    s = synthesize(tree)
    # capped at c = 0.5: logit(p) = logit(0.4) + weight(0.5)
    assert s.confidence == pytest.approx(sigmoid(logit(0.4) + weight(0.5)))
    assert s.confidence < 0.7
    assert s.uncertainty_reason and "backed by data" in s.uncertainty_reason


def test_sub_hypotheses_combine_by_noisy_or_then_own_checks_update_it() -> None:
    tree = new_tree()
    h = add(tree, "root", "hypothesis", prior=0.9)
    a = add(tree, h, "hypothesis", prior=0.2)
    b = add(tree, h, "hypothesis", prior=0.5)
    assert p(tree, h) == pytest.approx(1 - 0.8 * 0.5)  # the subs replace the prior
    check(tree, a, data(True, 1.0))
    pa = sigmoid(logit(0.2) + weight(1.0))  # a full-strength result is clipped to 0.99
    assert p(tree, a) == pytest.approx(pa)
    assert p(tree, h) == pytest.approx(1 - (1 - pa) * 0.5)
    check(tree, h, data(False, 0.5))
    base = 1 - (1 - pa) * 0.5
    assert p(tree, h) == pytest.approx(sigmoid(logit(base) - weight(0.5)))
    close_node(tree, b, "rejected", "ruled out")
    assert p(tree, h) == pytest.approx(sigmoid(logit(pa) - weight(0.5)))


def test_leaves_under_one_check_sum_but_never_exceed_one_full_result() -> None:
    tree = new_tree()
    h = add(tree, "root", "hypothesis")
    v = add(tree, h, "verification")
    for c in (0.6, 0.7):
        leaf = add(tree, v, "leaf")
        set_result(tree, leaf, data(True, c))
    assert tree.nodes[v].confidence == pytest.approx(1.0)
    # the signal 1.3 is clipped to one full result, itself clipped to MAX_SIGNAL
    assert p(tree, h) == pytest.approx(sigmoid(weight(1.0))) == pytest.approx(0.995)


def test_an_empty_or_fully_rejected_tree_concludes_nothing() -> None:
    tree = new_tree()
    assert synthesize(tree).uncertainty_reason == "no hypothesis was proposed"
    h = add(tree, "root", "hypothesis")
    close_node(tree, h, "rejected", "no data")
    s = synthesize(tree)
    assert s.not_established and s.confidence == 0.0 and s.primary.id == "none"
    assert s.uncertainty_reason == "every hypothesis was rejected or pruned"


def test_a_runbook_key_becomes_the_ranked_id() -> None:
    tree = new_tree()
    node = add_keyed(tree, "Availability outage", {"key": "technical"})
    s = synthesize(tree)
    assert (s.primary.id, s.primary.node_id, s.primary.title) == (
        "technical",
        node.id,
        "Availability outage",
    )


@given(
    st.floats(0.05, 0.95),
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
    st.floats(0.1, 0.9),
)
def test_a_hypothesis_never_rises_above_its_ceiling(
    ceiling_p: float, confirmations: list[float], runbook_p: float
) -> None:
    """A capped hypothesis (a model's candidate beside a runbook's) stays at or below its
    ceiling however much its own readings confirm it, and never outranks an uncapped one
    above that ceiling."""
    tree = new_tree()
    capped = add_keyed(tree, "DNS", {"key": "llm_dns", "ceiling": ceiling_p})
    for c in confirmations:
        check(tree, capped.id, Evidence(confirmed=True, confidence=c, has_data=True))
    runbook = add(tree, "root", "hypothesis", prior=runbook_p)
    assert p(tree, capped.id) <= ceiling_p
    if runbook_p > ceiling_p:
        assert synthesize(tree).primary.node_id == runbook


def test_a_ceiling_that_is_not_a_probability_is_no_ceiling() -> None:
    tree = new_tree()
    odd = add_keyed(tree, "x", {"ceiling": "high"})
    check(tree, odd.id, Evidence(confirmed=True, confidence=0.9, has_data=True))
    assert ceiling(odd) == 1.0 and p(tree, odd.id) > 0.9
