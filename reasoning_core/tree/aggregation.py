"""Bottom-up aggregation of a hypothesis tree: pure functions, no I/O.

The semantics of ARCHITECTURE.md, "Aggregation semantics", made exact:

- **Evidence.** A result votes ``+c`` (confirmed), ``-c`` (refuted) or ``0``
  (inconclusive). A judgement without data (``has_data=False``) has its strength
  capped at `NO_DATA_CAP`: confidence below 0.5 is speculation.
- **Verification (check).** Its signal is its own vote plus the signals of its
  leaves, clipped to [-1, 1]: one check never weighs more than one full-strength
  result, however many data points sit under it.
- **Hypothesis.** ``base`` is the noisy-OR ``1 - prod(1 - p_i)`` of its active
  sub-hypotheses when it has any (they replace the prior: the hypothesis holds if
  any of its mechanisms does), else its own prior. Its checks then update it in
  log-odds: ``logit(p) = logit(base) + sum(weight(signal_i))`` with
  ``weight(s) = K * atanh(s)``. Near zero that is ``K * s`` (ARCHITECTURE.md's
  "k about 2"); unlike a linear ``K * s``, which caps one check's effect on the
  odds at e^K (a 0%-availability outage could never make an outage likely from
  a modest prior), a near-certain, data-backed check can make its hypothesis
  near-certain. At prior 0.5 one check of strength c gives exactly p = (1 + c)/2
  (0.8 -> 0.9; refuted 0.8 -> 0.1). Signals are clipped to ±`MAX_SIGNAL` so
  weights stay finite.
  Both steps are monotone, so more confirming evidence anywhere below never
  lowers a hypothesis, and with prior 0.5 a refutation mirrors a confirmation.
  Last, p is clamped to the hypothesis's `ceiling` (1 unless its planner set one:
  a language model's hypothesis beside a runbook's stays below "established"), and
  to `ELIMINATION_MAX` when checks have spoken under it but none confirmed what it
  blames: a result whose data says ``measures: False`` (a part merely exists, a
  rival's part looks idle) or a veto that did not veto never establishes a cause.
- **Rejected and pruned** nodes, and everything under them, count for nothing;
  so do inconclusive results.
- **"Because" links** (hypotheses about what a confirmed one's finding waits on,
  explore/because.py) count for nothing in their parent: the parent's p is what its
  own evidence says; the synthesis reads the chain (tree/chain.py).
- **Root.** The root's hypotheses compete: the primary is the highest p, and the
  confidence is that p, lowered when the runner-up is within `CLOSE_MARGIN`:
  ``confidence = p1 * min(1, 0.5 + margin / (2 * CLOSE_MARGIN))`` (a tie halves
  it, a margin of `CLOSE_MARGIN` leaves it). Without a runner-up the margin is 1.
  `reasoning_core.tree.synthesis` turns this into a `Synthesis` with reasons.

Probabilities are clamped into [`P_MIN`, `P_MAX`] so every logit is finite.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from reasoning_core.models import Evidence, Node, Tree
from reasoning_core.tree.walk import ancestors, children, get_node, is_active, is_link, root_of

#: Slope of the evidence weight at zero: a weak check of strength c moves logit(p) by ~K*c.
K = 2.0
#: Largest usable signal: weight(0.99) = K * atanh(0.99) ≈ 5.3 in log-odds.
MAX_SIGNAL = 0.99
P_MIN = 0.001
P_MAX = 0.999
#: Strength cap of a judgement that no tool numbers back.
NO_DATA_CAP = 0.5
#: A runner-up closer than this lowers the root's confidence.
CLOSE_MARGIN = 0.15
#: Node types that carry evidence.
EVIDENCE_TYPES = frozenset({"verification", "leaf"})
#: The highest p of a hypothesis no confirmed check measures (below "established", 0.5):
#: left standing because its rivals were refuted, or by the mere existence of a part.
ELIMINATION_MAX = 0.45
#: `Evidence.data` key: False on a result that does not measure the part its hypothesis
#: blames (runbooks: a check's `measures: false`).
MEASURES = "measures"


def clamp_p(p: float) -> float:
    """Keep a probability inside [P_MIN, P_MAX] so its logit is finite."""
    return min(P_MAX, max(P_MIN, p))


def logit(p: float) -> float:
    """log(p / (1 - p)) of the clamped probability."""
    p = clamp_p(p)
    return math.log(p / (1.0 - p))


def sigmoid(x: float) -> float:
    """The inverse of `logit`, stable for large |x|."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def noisy_or(probabilities: Iterable[float]) -> float:
    """P(at least one holds) for independent causes: 1 - prod(1 - p_i)."""
    return 1.0 - math.prod(1.0 - p for p in probabilities)


def weight(signal: float) -> float:
    """The log-odds shift of a check's signal: K * atanh(s), s clipped to ±MAX_SIGNAL."""
    return K * math.atanh(max(-MAX_SIGNAL, min(MAX_SIGNAL, signal)))


def strength(evidence: Evidence) -> float:
    """The usable strength c of a result: capped at NO_DATA_CAP without data."""
    if evidence.has_data:
        return evidence.confidence
    return min(evidence.confidence, NO_DATA_CAP)


def vote(evidence: Evidence) -> float:
    """+c for a confirmation, -c for a refutation, 0 when inconclusive."""
    if evidence.confirmed is None:
        return 0.0
    c = strength(evidence)
    return c if evidence.confirmed else -c


def _evidence_children(tree: Tree, node_id: str) -> list[Node]:
    return [c for c in children(tree, node_id) if is_active(c) and c.node_type in EVIDENCE_TYPES]


def has_evidence(tree: Tree, node: Node) -> bool:
    """Does this check (or any active leaf under it) carry a result?"""
    if node.result is not None:
        return True
    return any(has_evidence(tree, c) for c in _evidence_children(tree, node.id))


def evidence_signal(tree: Tree, node: Node) -> float:
    """A check's net vote in [-1, 1]: its own result plus its leaves', clipped."""
    total = vote(node.result) if node.result is not None else 0.0
    total += sum(evidence_signal(tree, c) for c in _evidence_children(tree, node.id))
    return max(-1.0, min(1.0, total))


def evidence_confidence(tree: Tree, node: Node) -> float | None:
    """How strong a check's verdict is: its result's strength, or |signal| over leaves.

    None while nothing under it has a result.
    """
    with_results = [c for c in _evidence_children(tree, node.id) if has_evidence(tree, c)]
    if node.result is not None and not with_results:
        return strength(node.result)
    if node.result is None and not with_results:
        return None
    return abs(evidence_signal(tree, node))


def hypothesis_confidence(tree: Tree, node: Node) -> float:
    """p of a hypothesis from its sub-hypotheses (noisy-OR) and checks (log-odds).

    Sub-hypotheses contribute their stored confidence (computed on demand if
    missing), so updating one leaf only needs its ancestors recomputed.
    """
    p = uncapped_confidence(tree, node)
    if measured(tree, node) is False:
        p = min(p, ELIMINATION_MAX)
    return clamp_p(p)


def measures(evidence: Evidence) -> bool:
    """Does a confirmation measure the part its hypothesis blames? Not when its check says
    so (`measures: False`), nor for a veto (role "against": it can only speak against)."""
    return (
        evidence.data.get(MEASURES, True) is not False and evidence.data.get("role") != "against"
    )


def verdicts(tree: Tree, node: Node) -> list[Evidence]:
    """The conclusive results (confirmed or refuted) of the active checks under a node."""
    found = []
    for child in children(tree, node.id):
        if not is_active(child) or is_link(child):
            continue
        if child.node_type in EVIDENCE_TYPES | {"hypothesis"}:
            if child.result is not None and child.result.confirmed is not None:
                found.append(child.result)
            found.extend(verdicts(tree, child))
    return found


def measured(tree: Tree, node: Node) -> bool | None:
    """True: a confirmed check under the hypothesis measures what it blames; False: checks
    have spoken under it and none did (it stands by elimination at best); None: no verdict."""
    found = verdicts(tree, node)
    if not found:
        return None
    return any(e.confirmed and measures(e) for e in found)


def uncapped_confidence(tree: Tree, node: Node) -> float:
    """p of a hypothesis as its evidence alone makes it (its planner's ceiling kept, the
    cap of a cause no check measured lifted): did it stand by elimination?"""
    active = [c for c in children(tree, node.id) if is_active(c)]
    subs = [c for c in active if c.node_type == "hypothesis" and not is_link(c)]
    base = noisy_or(stored_or_computed(tree, s) for s in subs) if subs else node.prior
    shift = sum(weight(evidence_signal(tree, c)) for c in active if c.node_type in EVIDENCE_TYPES)
    return clamp_p(min(ceiling(node), sigmoid(logit(base) + shift)))


def ceiling(node: Node) -> float:
    """The highest p a hypothesis may reach: its planner's `HypothesisProposal.ceiling`
    (1.0 when it set none, as in trees stored before ceilings existed)."""
    value = node.context.get("ceiling", 1.0)
    return float(value) if isinstance(value, int | float) and 0.0 < value <= 1.0 else 1.0


def stored_or_computed(tree: Tree, node: Node) -> float:
    """A hypothesis's stored confidence, or its computed one when never stored."""
    if node.confidence is not None:
        return node.confidence
    return hypothesis_confidence(tree, node)


def ranking(tree: Tree) -> list[tuple[Node, float]]:
    """The root's active hypotheses with their p, highest first (ties: created first)."""
    root = root_of(tree)
    scored = [
        (n, stored_or_computed(tree, n))
        for n in children(tree, root.id)
        if is_active(n) and n.node_type == "hypothesis"
    ]
    return sorted(scored, key=lambda pair: -pair[1])  # sorted() is stable


def margin_of(ranked: list[tuple[Node, float]]) -> float:
    """p of the primary minus p of the runner-up; 1.0 when nothing competes."""
    if len(ranked) < 2:  # noqa: PLR2004 - a primary and a runner-up
        return 1.0
    return max(0.0, ranked[0][1] - ranked[1][1])


def adjusted_confidence(p_primary: float, margin: float) -> float:
    """The primary's p, lowered linearly when the runner-up is within CLOSE_MARGIN."""
    return p_primary * min(1.0, 0.5 + margin / (2 * CLOSE_MARGIN))


def root_confidence(tree: Tree) -> float:
    """Confidence of the root: the adjusted p of the primary, 0 with no hypotheses."""
    ranked = ranking(tree)
    if not ranked:
        return 0.0
    return adjusted_confidence(ranked[0][1], margin_of(ranked))


def node_confidence(tree: Tree, node: Node) -> float | None:
    """The confidence this node should carry, given its children's current values."""
    if node.node_type == "hypothesis":
        return hypothesis_confidence(tree, node)
    if node.node_type == "root":
        return root_confidence(tree)
    return evidence_confidence(tree, node)


def recompute_ancestors(tree: Tree, node_id: str) -> list[str]:
    """Recompute the node and its ancestors in place, bottom-up; returns their ids.

    Siblings and other branches keep their stored confidences: they did not change.
    """
    node = get_node(tree, node_id)
    chain = [node, *ancestors(tree, node_id)]
    for current in chain:
        current.confidence = node_confidence(tree, current)
    return [n.id for n in chain]
