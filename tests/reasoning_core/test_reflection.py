"""Reflection over trees built with the tree's own pure edits: checkpoints, decisions,
the critique (scripted model), revision bookkeeping, the "not established" report and
uncertainty reasons. The explorer-level scenarios live in test_reflection_deep.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.metrics import Metrics
from reasoning_core.errors import LLMTimeoutError
from reasoning_core.models import (
    Answer,
    Evidence,
    Node,
    RankedHypothesis,
    StrategyDecision,
    Synthesis,
    Tree,
)
from reasoning_core.planning import CheckProposal, HypothesisProposal, PlanningContext
from reasoning_core.ports import ChatMessage
from reasoning_core.reflection import (
    Reflection,
    ReflectionSettings,
    Reflector,
    plan_revised_event,
    reflection_event,
)
from reasoning_core.reflection_checkpoints import (
    contradictions,
    failed_checks,
    failure_of,
    first_level_settled,
    race,
)
from reasoning_core.reflection_critique import apply_critique, ask_critique
from reasoning_core.reflection_decision import RETRY_OF, Decision, RetryPlan, decide
from reasoning_core.reflection_report import (
    apply_not_established,
    not_established,
    render_not_established,
)
from reasoning_core.reflection_retry import direct_retry, widen_parameters
from reasoning_core.reflection_revision import (
    RevisionLedger,
    failure_text,
    revision_context,
    screen,
    set_aside,
)
from reasoning_core.reflection_tracker import CheckpointTracker
from reasoning_core.reflection_uncertainty import (
    UncertaintySources,
    uncertainty_reason,
    with_uncertainty,
)
from reasoning_core.tools.base import ToolRequest
from reasoning_core.tree.aggregation import ranking
from reasoning_core.tree.edits import NewNode, add_node, close_node, set_result
from reasoning_core.tree.synthesis import synthesize
from tests.fakes.scripted import ScriptedChatModel

NOW = datetime(2025, 1, 6, tzinfo=UTC)
CTX = PlanningContext(question="Why did traffic drop on cell 12345?", goal="find the cause")


class Builder:
    """A tree grown with the same pure edits the TreeManager applies."""

    def __init__(self) -> None:
        root = Node(id="root", tree_id="t1", node_type="root", status="in_progress", title="why")
        self.tree = Tree(id="t1", task="why", nodes={"root": root})

    def hyp(self, key: str, *, parent: str = "root", prior: float = 0.5) -> str:
        new = NewNode(
            parent, f"{key} cause", "hypothesis", key.title(), prior, prior, {"key": key}
        )
        node, _ = add_node(self.tree, new, max_depth=5, now=NOW)
        return node.id

    def check(
        self,
        hypothesis: str,
        title: str,
        result: Evidence | None = None,
        *,
        reject: str | None = None,
        context: dict[str, Any] | None = None,
    ) -> str:
        ctx = {"tool": "sql", "query": f"SELECT {title}", **(context or {})}
        new = NewNode(hypothesis, title, "verification", title, 0.5, 0.5, ctx)
        node, _ = add_node(self.tree, new, max_depth=5, now=NOW)
        if result is not None:
            set_result(self.tree, node.id, result)
        if reject is not None:
            close_node(self.tree, node.id, "rejected", reject)
        return node.id


def ev(confirmed: bool | None, c: float, text: str = "", **data: Any) -> Evidence:
    return Evidence(
        confirmed=confirmed, confidence=c, text=text or f"value {c}", data=data, has_data=True
    )


def no_winner_tree() -> Builder:
    """Three hypotheses, each refuted by data: settled, none reaches 0.5."""
    b = Builder()
    for key in ("technical", "demand", "external"):
        h = b.hyp(key, prior=0.3)
        b.check(h, f"{key} check", ev(False, 0.8, f"{key}: no change (-1%)", rows=96))
    return b


def undecided() -> Builder:
    """Two hypotheses with weak evidence and work still open: nothing is firm."""
    b = Builder()
    for key in ("technical", "demand"):
        h = b.hyp(key)
        b.check(h, f"{key} a", ev(True, 0.2))
        b.check(h, f"{key} open")
    return b


def scripted(*replies: str) -> ScriptedChatModel:
    queue = list(replies)

    def reply(messages: Sequence[ChatMessage]) -> str:
        return queue.pop(0) if queue else replies[-1]

    return ScriptedChatModel(reply)


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


# --- the critique ------------------------------------------------------------------------


async def test_a_malformed_or_failing_critique_is_ignored() -> None:
    b = undecided()
    checkpoints = CheckpointTracker(every=1).observe(b.tree)
    decision = decide(b.tree, checkpoints, revisions_left=1)
    assert not decision.firm
    for model in (
        scripted("not json at all"),
        scripted('{"action": "revise", "reason": "   "}'),
        scripted(""),
        ScriptedChatModel(lambda _: LLMTimeoutError("slow")),
    ):
        critique, _ = await ask_critique(
            model, b.tree, checkpoints, decision, goal="g", revisions_left=1
        )
        assert critique is None
        assert apply_critique(b.tree, decision, critique, revisions_left=1) == decision


async def test_the_critique_sees_the_numbers_and_may_revise_within_the_limit() -> None:
    b = undecided()
    checkpoints = CheckpointTracker(every=1).observe(b.tree)
    decision = decide(b.tree, checkpoints, revisions_left=1)
    model = scripted('{"action": "revise", "reason": "the hypotheses miss a reporting gap"}')
    critique, usage = await ask_critique(
        model, b.tree, checkpoints, decision, goal="g", revisions_left=1
    )
    prompt = model.calls[0][-1].content or ""
    assert "h1: Technical" in prompt and "Allowed actions: continue, retry, revise" in prompt
    assert usage.llm_calls == 1
    revised = apply_critique(b.tree, decision, critique, revisions_left=1)
    assert (revised.action, revised.source) == ("revise", "critique")
    bounded = apply_critique(b.tree, decision, critique, revisions_left=0)
    assert bounded.action == decision.action
    assert bounded.critique == "the hypotheses miss a reporting gap"


async def test_firm_numbers_stand_but_take_an_alternative_query() -> None:
    b = Builder()
    h = b.hyp("technical", prior=0.3)
    bad = b.check(h, "rtwp", reject="sql timeout: slow")
    checkpoints = CheckpointTracker().observe(b.tree)
    decision = decide(b.tree, checkpoints, revisions_left=1)
    assert decision.firm and decision.action == "retry"
    reply = {
        "action": "continue",
        "reason": "use the daily table",
        "retry": [
            {"node_id": bad, "how": "alternative_query", "query": "SELECT avg(rtwp) FROM d"},
            {"node_id": "h9.v9", "how": "again"},
        ],
    }
    critique, _ = await ask_critique(
        scripted(json.dumps(reply)), b.tree, checkpoints, decision, goal="g", revisions_left=1
    )
    final = apply_critique(b.tree, decision, critique, revisions_left=1)
    assert final.action == "retry"
    assert [(r.node_id, r.how, r.query) for r in final.retries] == [
        (bad, "alternative_query", "SELECT avg(rtwp) FROM d")
    ]


async def test_an_always_revise_critique_is_bounded_by_the_revision_limit() -> None:
    model = scripted('{"action": "revise", "reason": "start over"}')
    reflector = Reflector(
        settings=ReflectionSettings(max_plan_revisions=1, reflection_every=1),
        model=model,
        goal="g",
    )
    b = Builder()
    h = b.hyp("technical")
    revisions = 0
    for step in range(4):
        b.check(h, f"c{step}", ev(True, 0.2))
        b.check(h, f"open{step}")
        reflection = await reflector.reflect(b.tree, reflector.checkpoints(b.tree))
        if reflection.decision.action == "revise" and reflector.start_revision(CTX, b.tree):
            revisions += 1
    assert revisions == 1
    assert reflector.ledger.remaining == 0
    assert reflector.reflections == 4


# --- revisions -----------------------------------------------------------------------------


def test_a_revision_refuses_earlier_hypotheses_by_key_or_title() -> None:
    b = no_winner_tree()
    close_node(b.tree, "h1", "rejected", "set aside")
    proposals = [
        HypothesisProposal(key="technical", title="Something new"),
        HypothesisProposal(key="outage2", title="  demand. "),
        HypothesisProposal(key="reporting_gap", title="Reporting gap"),
        HypothesisProposal(key="reporting_gap2", title="reporting GAP"),
    ]
    accepted, refused = screen(b.tree, proposals)
    assert [p.key for p in accepted] == ["reporting_gap"]
    assert len(refused) == 3 and all("repeats" in why for _, why in refused)


def test_the_planner_hears_why_the_previous_attempt_failed() -> None:
    b = no_winner_tree()
    b.check("h2", "area", reject="sql missing: column neighbors does not exist")
    text = failure_text(b.tree)
    assert text.startswith("no hypothesis reached 0.5")
    assert "Checked: Technical / technical check: refuted (0.80)" in text
    assert "Ruled out: Technical" in text
    assert "Could not check: Demand / area: sql missing" in text
    ctx = revision_context(CTX.model_copy(update={"excluded_hypotheses": ["old"]}), b.tree)
    assert ctx.previous_failure == text
    assert ctx.excluded_hypotheses == ["demand", "external", "old", "technical"]
    assert [n for n, _ in set_aside(b.tree, revision=1, reason="x")] == ["h1", "h2", "h3"]
    ledger = RevisionLedger(max_revisions=1)
    assert ledger.take() and not ledger.take() and ledger.used == 1


# --- "not established" and uncertainty -------------------------------------------------------


def test_not_established_report_names_the_missing_data_and_asks() -> None:
    b = no_winner_tree()
    b.check("h1", "RTWP rise", ev(None, 0.0, reason="rtwp: no recent data in the window"))
    synthesis = synthesize(b.tree)
    assert synthesis.not_established
    report = not_established(b.tree, synthesis)
    assert report is not None and report.confidence < 0.5
    assert any("technical check: refuted" in line for line in report.checked)
    assert any(line.startswith("Technical (") for line in report.ruled_out)
    assert report.missing == ["Technical / RTWP rise: rtwp: no recent data in the window"]
    assert any("'RTWP rise'" in line for line in report.settle_with)
    assert report.question and "'RTWP rise'" in report.question
    applied = apply_not_established(synthesis, report, b.tree)
    assert applied.confidence < 0.5 and applied.not_established
    assert applied.uncertainty_reason and "not established" in applied.uncertainty_reason
    assert any("RTWP rise: not checked" in line for line in applied.evidence)
    assert any(r.startswith("Answer: ") for r in applied.recommendations)
    text = render_not_established(report)
    assert "The cause is not established" in text and "Data that would settle it:" in text
    ru = render_not_established(
        not_established(b.tree, synthesis, language="ru") or report, language="ru"
    )
    assert "Причина не установлена" in ru and "RTWP rise" in ru


def test_an_established_cause_has_no_such_report() -> None:
    b = Builder()
    b.check(b.hyp("technical"), "availability", ev(True, 0.95))
    assert not_established(b.tree, synthesize(b.tree)) is None


def test_uncertainty_reason_from_the_real_causes() -> None:
    assert uncertainty_reason(0.8, UncertaintySources(), existing=None) is None
    quick = Answer(strategy="quick", text="maybe", confidence=0.4, planner="llm")
    assert "model's judgement" in (with_uncertainty(quick).uncertainty_reason or "")
    doubt = StrategyDecision(
        strategy="deep", confidence=0.5, reason="r", uncertainty_reason="no cell named"
    )
    ranked = [
        RankedHypothesis(id="a", title="A", confidence=0.55),
        RankedHypothesis(id="b", title="B", confidence=0.5),
    ]
    synthesis = Synthesis(
        primary=ranked[0],
        confidence=0.4,
        margin=0.05,
        ranking=ranked,
        evidence=["A / x: inconclusive (0.00): thin", "A / y: not checked — sql timeout: slow"],
    )
    reason = uncertainty_reason(
        0.4, UncertaintySources(decision=doubt, synthesis=synthesis), existing="the model said so"
    )
    assert reason is not None
    assert reason.startswith("the model said so")
    for part in (
        "choice of how to answer",
        "no cell named",
        "'B'",
        "1 check(s) were inconclusive",
        "missing data: 1 check(s)",
    ):
        assert part in reason
    b = no_winner_tree()
    b.check("h1", "rtwp", reject="sql timeout: slow")
    tree_reason = uncertainty_reason(
        0.3, UncertaintySources(synthesis=synthesize(b.tree), tree=b.tree)
    )
    assert tree_reason and "no hypothesis reached 0.5" in tree_reason and "(rtwp)" in tree_reason


# --- events and counters ---------------------------------------------------------------------


def test_events_are_one_line_and_counted_by_the_metrics() -> None:
    decision = Decision(
        action="revise", reason="no hypothesis reached 0.5", triggers=["no_winner"]
    )
    event = reflection_event(Reflection(checkpoints=[], decision=decision))
    assert event.kind == "reflection" and "\n" not in event.message
    assert event.message.startswith("Reflection (no winner): revise the plan")
    revised = plan_revised_event(1, "no hypothesis reached 0.5. Checked: a", ["Reporting gap"])
    assert revised.message == (
        "Plan revised (1): the previous attempt failed because no hypothesis reached 0.5; "
        "new: Reporting gap"
    )
    metrics = Metrics()
    for e in (event, event, revised):
        metrics.observe_event(e)
    sample = metrics.registry.get_sample_value
    assert sample("reflection_triggered_total") == 2
    assert sample("plan_revised_total") == 1


@pytest.mark.parametrize("enabled", [True, False])
def test_reflection_can_be_switched_off(enabled: bool) -> None:
    reflector = Reflector(settings=ReflectionSettings(enabled=enabled))
    b = Builder()
    b.check(b.hyp("technical"), "rtwp", reject="sql timeout: slow")
    assert bool(reflector.checkpoints(b.tree)) is enabled


# --- retries made concrete ----------------------------------------------------------------


def test_a_retry_in_the_tree_is_never_repeated_after_a_restart() -> None:
    b = Builder()
    h = b.hyp("technical", prior=0.3)
    slow = b.check(h, "rtwp", reject="sql timeout: slow")
    b.check(h, "rtwp (retry: run again with more time)", ev(True, 0.4), context={RETRY_OF: slow})
    decision = decide(b.tree, CheckpointTracker().observe(b.tree), revisions_left=0)
    assert slow not in [r.node_id for r in decision.retries]


def test_windows_widen_backwards_and_keep_the_baseline_length() -> None:
    window = {
        "recent_start": "2025-01-04T00:00:00+00:00",
        "recent_end": "2025-01-07T00:00:00+00:00",
        "baseline_start": "2024-12-14T00:00:00+00:00",
        "baseline_end": "2025-01-04T00:00:00+00:00",
        "source": "default",
    }
    params = {"cell": "1", "runbook_plan": {"runbook": "x", "window": window}}
    widened = widen_parameters(params, 2.0)
    assert widened is not None and widened["cell"] == "1"
    new = widened["runbook_plan"]["window"]
    assert new["recent_start"] == "2025-01-01T00:00:00+00:00"
    assert new["recent_end"] == window["recent_end"]
    assert new["baseline_end"] == "2025-01-01T00:00:00+00:00"
    assert new["baseline_start"] == "2024-12-11T00:00:00+00:00"
    assert widen_parameters({"cell": "1"}, 2.0) is None
    check = CheckProposal(
        key="q",
        description="d",
        tool="prometheus",
        request=ToolRequest(
            query="up",
            start=datetime(2025, 1, 6, tzinfo=UTC),
            end=datetime(2025, 1, 7, tzinfo=UTC),
        ),
    )
    plan = RetryPlan(
        node_id="h1.v1", hypothesis_id="h1", how="wider_window", reason="thin", window_factor=3
    )
    wider = direct_retry(check, plan)
    assert wider is not None and wider.request.start == datetime(2025, 1, 4, tzinfo=UTC)
    again = direct_retry(check, plan.model_copy(update={"how": "again", "timeout_factor": 2.0}))
    assert again is not None and again.request.timeout_sec == 30.0
