"""Reflection: the critique, revisions, reports, uncertainty, events and retries."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from bot.operations.metrics import Metrics
from reasoning_core.errors import LLMTimeoutError
from reasoning_core.models import (
    Answer,
    RankedHypothesis,
    StrategyDecision,
    Synthesis,
)
from reasoning_core.ports.planning import CheckProposal, HypothesisProposal
from reasoning_core.reflection.critique import apply_critique, ask_critique
from reasoning_core.reflection.decision import RETRY_OF, Decision, RetryPlan, decide
from reasoning_core.reflection.reflector import (
    Reflection,
    ReflectionSettings,
    Reflector,
    plan_revised_event,
    reflection_event,
)
from reasoning_core.reflection.report import (
    apply_not_established,
    not_established,
    render_not_established,
)
from reasoning_core.reflection.retry import direct_retry, widen_parameters
from reasoning_core.reflection.revision import (
    RevisionLedger,
    failure_text,
    revision_context,
    screen,
    set_aside,
)
from reasoning_core.reflection.tracker import CheckpointTracker
from reasoning_core.reflection.uncertainty import (
    UncertaintySources,
    uncertainty_reason,
    with_uncertainty,
)
from reasoning_core.tools.base import ToolRequest
from reasoning_core.tree.edits import close_node
from reasoning_core.tree.synthesis import synthesize
from tests.fakes.scripted import ScriptedChatModel
from tests.reasoning_core.reflection.helpers import (
    CTX,
    Builder,
    ev,
    no_winner_tree,
    scripted,
    undecided,
)

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
