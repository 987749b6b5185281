"""The runbook planner's pieces: bound requests, alternatives, `against`, the gate,
missing and reused parameters, follow-up plans, guidance; and the explorer's
support for sub-hypotheses proposed up front (`HypothesisProposal.children`).

Data checks run against real PostgreSQL (the small demo schema of
test_shipped_runbooks: cell 10001 has an outage for the last 40 hours).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import answer_of
from reasoning_core.explore.merge import merge
from reasoning_core.models import Evidence, RankedHypothesis, Synthesis, Tree
from reasoning_core.planners.llm.guidance import runbook_guidance
from reasoning_core.planners.runbook.checks import STATE_KEY, as_role, bind_sql
from reasoning_core.planners.runbook.plan import MissingParameterError, NoRunbookError
from reasoning_core.planners.runbook.planner import RunbookPlanner, checks_for, state_of
from reasoning_core.planners.runbook.words import hypothesis_proposal
from reasoning_core.ports.planning import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)
from reasoning_core.runbooks import Runbook, load_runbooks
from reasoning_core.tree.aggregation import logit, noisy_or, sigmoid, weight
from reasoning_core.tree.walk import children
from reasoning_core.understanding import understand
from storage.sql_tool import PgSqlTool
from storage.trees import PgTreeStore
from tests.reasoning_core.explore.test_explorer import (
    NO_SHORTCUTS,
    RecordingTool,
    ScriptedPlanner,
    check,
    ev,
)
from tests.reasoning_core.runbooks.test_shipped_runbooks import load_demo

RUNBOOKS = load_runbooks()
CELL: Runbook = RUNBOOKS.runbooks["cell_traffic_drop"]


def ctx(question: str, **kw: Any) -> PlanningContext:
    return PlanningContext(question=question, goal=question, **kw)


@pytest.fixture
async def sql(pool: asyncpg.Pool[Any], database_url: str) -> Any:
    async with pool.acquire() as conn:
        await load_demo(conn)
    tool = await PgSqlTool.connect(database_url)
    yield tool
    await tool.close()


def planner_with(sql: PgSqlTool) -> RunbookPlanner:
    return RunbookPlanner(RUNBOOKS, tools={"sql": sql})


# --- pure pieces -------------------------------------------------------------------


def test_values_reach_sql_only_as_arguments_and_times_as_cast_text() -> None:
    start = datetime(2026, 10, 1, tzinfo=UTC)
    sql, args = bind_sql(
        "SELECT ':cell', $q$:x$q$ FROM t WHERE c = :cell AND dt >= :start::timestamptz "
        "AND dt < :start + :step",
        {"cell": "1'; drop table x;--", "start": start, "step": timedelta(hours=1), "x": 1},
    )
    assert sql == (
        "SELECT ':cell', $q$:x$q$ FROM t WHERE c = $1 AND dt >= $2::text::timestamptz"
        "::timestamptz AND dt < $2::text::timestamptz + $3::text::interval"
    )
    assert args == ["1'; drop table x;--", start.isoformat(), "3600 seconds"]


def test_a_combine_any_hypothesis_comes_with_alternatives_that_give_back_its_prior() -> None:
    technical = CELL.hypothesis("technical")
    proposal = hypothesis_proposal(CELL, technical, "ru")
    assert proposal.key == "technical" and proposal.title.startswith("Техническая")
    keys = [c.key for c in proposal.children]
    assert keys == ["technical.availability", "technical.interference"]
    assert noisy_or(c.prior for c in proposal.children) == pytest.approx(technical.prior)
    assert proposal.children[0].title == "Авария (падение доступности)"
    assert hypothesis_proposal(CELL, CELL.hypothesis("demand"), "en").children == []


def test_checks_of_hypotheses_and_alternatives() -> None:
    def ids(key: str) -> list[tuple[str, str]]:
        return [(c.id, role) for c, role in checks_for(CELL, key)]

    assert ids("demand") == [
        ("attempts_drop", "for"), ("area_follows", "for"),
        ("availability_drop", "against"), ("rtwp_rise", "against"),
    ]  # fmt: skip
    assert ids("technical.interference") == [("rtwp_rise", "for")]


def test_against_is_a_veto() -> None:
    found = Evidence(confirmed=True, confidence=0.8, text="availability 40%", has_data=True)
    veto = as_role(found, "against", "en")
    assert (veto.confirmed, veto.confidence) == (False, 0.8)
    assert veto.text == "speaks against it: availability 40%"
    healthy = as_role(found.model_copy(update={"confirmed": False}), "against", "ru")
    assert (healthy.confirmed, healthy.confidence) == (None, 0.0)
    assert healthy.text.startswith("не говорит против")
    assert as_role(found, "for", "en") == found


def test_the_planners_wording_of_the_primary_title_is_kept() -> None:
    ranked = [
        RankedHypothesis(id="technical", node_id="h1", title="Technical", confidence=0.6),
        RankedHypothesis(id="demand", node_id="h2", title="Demand", confidence=0.2),
    ]
    aggregated = Synthesis(primary=ranked[0], confidence=0.6, ranking=ranked)
    worded_primary = ranked[0].model_copy(update={"title": "Technical: outage"})
    worded = aggregated.model_copy(update={"primary": worded_primary})
    merged = merge("best_first", Tree(id="t", task="x"), aggregated, worded)
    assert merged.primary.title == "Technical: outage"
    assert merged.ranking[0].title == "Technical: outage" and merged.confidence == 0.6
    other = worded.model_copy(update={"primary": ranked[1]})  # not the chosen primary
    assert merge("best_first", Tree(id="t", task="x"), aggregated, other).primary == ranked[0]


def test_guidance_describes_the_matching_runbook() -> None:
    text = runbook_guidance(RUNBOOKS, understand("Why did traffic drop on cell 10001?"))
    assert text is not None and "Runbook cell_traffic_drop" in text
    assert "hypothesis technical" in text and "against if confirmed: availability_drop" in text
    assert "Parameters: cell=10001" in text
    assert runbook_guidance(RUNBOOKS, understand("What is the capital of France?")) is None


# --- the explorer grows proposed alternatives -----------------------------------------


async def test_children_become_sub_hypotheses_and_get_the_checks(pool: asyncpg.Pool[Any]) -> None:
    alternatives = [
        HypothesisProposal(key="outage", title="Outage", prior=0.2),
        HypothesisProposal(key="noise", title="Interference", prior=0.2),
    ]
    parent = HypothesisProposal(key="technical", title="Technical", children=alternatives)
    planner = ScriptedPlanner(
        Plan(hypotheses=[parent, HypothesisProposal(key="demand", title="Demand", prior=0.3)]),
        {"outage": [check("o1")], "noise": [check("n1")], "demand": [check("d1")]},
        {"o1": ev(True, 0.9), "n1": ev(False, 0.9), "d1": ev(False, 0.5)},
    )
    tool = RecordingTool()
    analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools={"sql": tool},
                          policy=NO_SHORTCUTS)  # fmt: skip
    events = [e async for e in analyst.run(ctx("Why?"), user_id=1, chat_id=1)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None and answer.tree_id
    asked = [key for kind, key in planner.calls if kind == "checks"]
    assert sorted(asked) == ["demand", "noise", "outage"]  # not the parent
    tree = await PgTreeStore(pool).load(answer.tree_id)
    [technical] = [n for n in tree.nodes.values() if n.context.get("key") == "technical"]
    subs = {n.context["key"]: n for n in children(tree, technical.id)}
    assert set(subs) == {"outage", "noise"}
    p_outage = sigmoid(logit(0.2) + weight(0.9))
    p_noise = sigmoid(logit(0.2) - weight(0.9))
    assert technical.confidence == pytest.approx(noisy_or([p_outage, p_noise]))
    assert answer.synthesis.primary.id == "technical"


# --- against real PostgreSQL ----------------------------------------------------------


async def test_a_missing_cell_asks_with_the_cells_that_fell_most(sql: PgSqlTool) -> None:
    planner = planner_with(sql)
    with pytest.raises(MissingParameterError) as caught:
        await planner.propose_hypotheses(ctx("Почему упал трафик?"))
    error = caught.value
    assert error.runbook == "cell_traffic_drop" and error.missing == ["cell"]
    [question] = error.questions
    assert question.text.startswith("Какую соту") and question.options[0] == "10001"
    assert await planner.clarifying_questions(understand("Why did traffic drop?")) != []
    assert (
        await planner.clarifying_questions(understand("Why did traffic drop?"), {"cell": "10001"})
        == []
    )
    with pytest.raises(NoRunbookError, match="no runbook matches"):
        await planner.propose_hypotheses(ctx("What is the capital of France?"))


async def test_a_reused_cell_fills_the_gap_and_the_plan_is_kept(sql: PgSqlTool) -> None:
    planner = planner_with(sql)
    plan = await planner.propose_hypotheses(
        ctx("Why did traffic drop?", parameters={"cell": "10001"})
    )
    assert [h.key for h in plan.hypotheses] == ["technical", "demand", "external"]
    assert plan.parameters["cell"] == "10001"
    state = state_of(plan.parameters)
    assert state is not None and state.anchor.hour == 23 and state.window.source == "default"
    planned = ctx("Why did traffic drop?", parameters=plan.parameters)
    checks = await planner.propose_checks(planned, plan.hypotheses[1])
    assert [c.key for c in checks] == [
        "attempts_drop", "area_follows", "availability_drop.against", "rtwp_rise.against",
    ]  # fmt: skip
    assert all("10001" not in (c.request.query or "") for c in checks)
    assert all("10001" in c.request.params for c in checks)
    # A later call (branching) proposes nothing; a revision adds only the fallback.
    assert await planner.propose_hypotheses(planned) == Plan()
    revised = planned.model_copy(update={"previous_failure": "no winner"})
    assert [h.key for h in (await planner.propose_hypotheses(revised)).hypotheses] == [
        "reporting_gap"
    ]


async def test_excluded_and_fallback_hypotheses_on_a_revision(sql: PgSqlTool) -> None:
    planner = planner_with(sql)
    revision = ctx(
        "Why did traffic drop on cell 10001?",
        previous_failure="nothing was established",
        excluded_hypotheses=["technical", "external"],
    )
    plan = await planner.propose_hypotheses(revision)
    assert [h.key for h in plan.hypotheses] == ["demand", "reporting_gap"]


async def test_the_gate_answers_none_for_a_healthy_cell(sql: PgSqlTool) -> None:
    plan = await planner_with(sql).propose_hypotheses(ctx("Why did traffic drop on cell 10004?"))
    assert plan.hypotheses == [] and plan.conclusion is not None
    assert plan.conclusion.confirmed is True and plan.conclusion.has_data
    assert plan.conclusion.text.startswith("No traffic drop found\ntraffic index")


async def test_interpretation_applies_the_verdict_and_the_veto(sql: PgSqlTool) -> None:
    planner = planner_with(sql)
    plan = await planner.propose_hypotheses(ctx("Why did traffic drop on cell 10001?"))
    planned = ctx("x", parameters=plan.parameters)
    demand = next(h for h in plan.hypotheses if h.key == "demand")
    checks = {c.key: c for c in await planner.propose_checks(planned, demand)}
    veto = checks["availability_drop.against"]
    assert veto.extra["role"] == "against" and STATE_KEY in veto.extra
    stored = CheckProposal.model_validate(veto.model_dump(mode="json"))  # as the tree keeps it
    evidence = await planner.interpret(planned, demand, stored, await sql.run(stored.request))
    assert evidence.confirmed is False and evidence.confidence > 0.5
    assert "availability" in evidence.text and evidence.data["detail"] == "availability"
