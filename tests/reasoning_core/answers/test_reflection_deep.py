"""Reflection in deep analyses end to end: the LLM planner over the fake OpenAI server (real
HTTP, real OpenAIChatModel), read-only SQL on a real table, trees in PostgreSQL; and the
runbook planner alone on a demo case whose decisive counters are missing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import pytest

from benchmarks.deep_script import DeepLLMScript, ScriptedCheck, ScriptedHypothesis
from benchmarks.incidents.case import read_case
from benchmarks.incidents.reflection_cases import missing_data_case
from demo.loader import load_case_dir
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import BaseEvent, Event, PlanRevisedEvent, ReflectionEvent, answer_of
from reasoning_core.explore.policy import ExplorationPolicy
from reasoning_core.llm import prompts
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.models import Answer, Tree
from reasoning_core.planners.llm.planner import LLMPlanner
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.reflection.reflector import ReflectionSettings
from reasoning_core.runbooks import load_runbooks
from storage.sql_tool import PgSqlTool
from storage.tree_pages import PgTreeJournal
from storage.trees import PgTreeStore

CTX = PlanningContext(question="Why did traffic drop on cell 12345 since 8 May?", goal="Find why")
POLICY = ExplorationPolicy(stop_confidence=1.0, contradiction_threshold=0.0)
ON = ReflectionSettings(max_plan_revisions=1, reflection_every=3)
SINCE = "DATE '2024-05-08'"
AVAIL = f"SELECT min(availability) AS min_availability FROM demo.cell_days WHERE day >= {SINCE}"
ATTEMPTS = (
    f"SELECT avg(attempts) FILTER (WHERE day < {SINCE}) AS before, "
    f"avg(attempts) FILTER (WHERE day >= {SINCE}) AS after FROM demo.cell_days"
)


def rows_of(result_text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result_text.splitlines()[1:] if line.startswith("{")]


def judge_outage(text: str) -> tuple[str, float, str]:
    low = rows_of(text)[0]["min_availability"]
    return ("confirmed", 0.9, f"min availability {low}%") if low < 90 else ("refuted", 0.9, "ok")


def judge_attempts(text: str) -> tuple[str, float, str]:
    row = rows_of(text)[0]
    verdict = "refuted" if row["after"] / row["before"] > 0.9 else "confirmed"
    return verdict, 0.8, f"attempts {row['before']:.0f} -> {row['after']:.0f}"


def outage(query: str = AVAIL) -> ScriptedHypothesis:
    check = ScriptedCheck("avail_min", "Lowest availability", query, judge=judge_outage)
    return ScriptedHypothesis("outage", "Cell outage", 0.5, [check])


def demand() -> ScriptedHypothesis:
    check = ScriptedCheck("attempts", "Attempts before and after", ATTEMPTS, judge=judge_attempts)
    return ScriptedHypothesis("demand", "Demand fell", 0.5, [check])


def neighbour() -> ScriptedHypothesis:
    check = ScriptedCheck(
        "nb",
        "Neighbour traffic",
        "SELECT avg(neighbour_traffic) AS t FROM demo.cell_days",
        verdict="refuted",
        strength=0.7,
        evidence="50 -> 50",
    )
    return ScriptedHypothesis("neighbour", "Neighbour change", 0.5, [check])


class ReflectiveScript(DeepLLMScript):
    """DeepLLMScript plus revisions (the next plan after "previous attempt failed") and
    critiques; retried checks are recognised by their description's start."""

    def __init__(
        self,
        hypotheses: list[ScriptedHypothesis],
        *,
        revisions: list[list[ScriptedHypothesis]] | None = None,
        critique: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(hypotheses)
        self.revisions = list(revisions or [])
        self.critique = critique
        self.plans: list[str] = []

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request.get("messages", [])
        system = str(messages[0].get("content") or "") if messages else ""
        user = str(messages[1].get("content") or "") if len(messages) > 1 else ""
        if system == prompts.REFLECTION_CRITIQUE_SYSTEM:
            self.calls["critique"] += 1
            return Reply.json(self.critique or {"action": "continue", "reason": "fine"})
        revising = "previous attempt failed" in user and "is still undecided" not in user
        if system == prompts.DEEP_HYPOTHESES_SYSTEM and revising:
            self.plans.append(user)
            self.calls["revision"] += 1
            if self.revisions:
                self.hypotheses = [*self.hypotheses, *self.revisions.pop(0)]
                new = self.hypotheses[-1:] if self.critique else self.hypotheses
                return Reply.json({"hypotheses": [_wire(h) for h in new], "conclusion": None})
            return Reply.json({"hypotheses": [], "conclusion": None})
        return super().__call__(request)

    def _find_check(self, user: str) -> ScriptedCheck | None:
        checks = [c for h in self._all_hypotheses() for c in h.checks]
        return next((c for c in checks if f"\nCheck: {c.description}" in user), None)


def _wire(h: ScriptedHypothesis) -> dict[str, Any]:
    return {
        "key": h.key,
        "title": h.title,
        "description": f"{h.title} explains it",
        "prior": h.prior,
        "confirm_if": "data",
        "refute_if": "data",
    }


@pytest.fixture
async def model() -> AsyncIterator[tuple[FakeOpenAIServer, OpenAIChatModel]]:
    async with FakeOpenAIServer() as server:
        chat = OpenAIChatModel(base_url=server.base_url, api_key="test", model="fake", timeout=5)
        yield server, chat
        await chat.aclose()


async def analyse(
    pool: asyncpg.Pool[Any],
    llm: tuple[FakeOpenAIServer, OpenAIChatModel],
    sql: PgSqlTool,
    script: DeepLLMScript,
    settings: ReflectionSettings = ON,
    *,
    critic: bool = True,
) -> tuple[list[Event], Answer, Tree]:
    server, chat = llm
    server.script(script)
    analyst = DeepAnalyst(
        tree_store=PgTreeStore(pool),
        planner=LLMPlanner(chat, schema_description="demo.cell_days"),
        tools={"sql": sql},
        policy=POLICY,
        reflection=settings,
        critic=chat if critic else None,
        journal=PgTreeJournal(pool),
    )
    events = [e async for e in analyst.run(CTX, user_id=5, chat_id=5)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    tree = await PgTreeStore(pool).load(answer.tree_id or "")
    return events, answer, tree


E = TypeVar("E", bound=BaseEvent)


def kinds(events: list[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


async def test_a_check_that_timed_out_is_retried_with_more_time(
    pool: asyncpg.Pool[Any],
    model: tuple[FakeOpenAIServer, OpenAIChatModel],
    cell_days_sql: PgSqlTool,
) -> None:
    slow = (
        # ~16M joined rows: well over the 300 ms default, well under the retry's 30 s
        "SELECT min(availability) AS min_availability FROM demo.cell_days, "
        "(SELECT count(*) FROM generate_series(1, 4000) a, generate_series(1, 4000) b) s "
        f"WHERE day >= {SINCE}"
    )
    events, answer, tree = await analyse(
        pool, model, cell_days_sql, ReflectiveScript([outage(slow), demand()])
    )
    first = next(n for n in tree.nodes.values() if n.context.get("key") == "avail_min")
    assert first.status == "rejected" and "timeout" in (first.rejection_reason or "")
    retry = next(n for n in tree.nodes.values() if n.context.get("retry_of") == first.id)
    assert retry.status == "completed" and retry.result is not None and retry.result.confirmed
    assert retry.context["retry_how"] == "again"
    reflection = kinds(events, ReflectionEvent)[0]
    assert "check_failed" in reflection.triggers and reflection.action == "retry"
    assert "\n" not in reflection.message and "Reflection (check failed" in reflection.message
    assert answer.synthesis is not None and answer.synthesis.primary.id == "outage"
    assert kinds(events, PlanRevisedEvent) == []


async def test_no_winner_revision_grows_a_new_hypothesis_that_wins(
    pool: asyncpg.Pool[Any],
    model: tuple[FakeOpenAIServer, OpenAIChatModel],
    cell_days_sql: PgSqlTool,
) -> None:
    script = ReflectiveScript([demand(), neighbour()], revisions=[[outage()]])
    events, answer, tree = await analyse(pool, model, cell_days_sql, script)
    assert script.calls["revision"] == 1
    plan = script.plans[0]
    assert "The previous attempt failed because no hypothesis reached 0.5" in plan
    assert "Checked: Demand fell / Attempts before and after: refuted" in plan
    assert "Excluded keys: demand, neighbour" in plan
    revised = kinds(events, PlanRevisedEvent)
    assert len(revised) == 1 and revised[0].revision == 1
    assert "new: Cell outage" in revised[0].message
    assert tree.revision == 1
    old = {n.context.get("key"): n for n in tree.nodes.values() if n.node_type == "hypothesis"}
    for key in ("demand", "neighbour"):  # kept, rejected with the reason
        assert old[key].status == "rejected"
        assert (old[key].rejection_reason or "").startswith("set aside by plan revision 1")
    assert answer.synthesis is not None and answer.synthesis.primary.id == "outage"
    assert answer.confidence >= 0.7 and "min availability 60.0%" in answer.text
    # the repeat of "demand" and "neighbour" in the revised plan was refused
    assert sum(n.context.get("key") == "demand" for n in tree.nodes.values()) == 1
    # the journal kept every reflection and the revision, in order, for the analysis page
    journal = await PgTreeJournal(pool).events(tree.id)
    emitted = [e for e in events if e.kind in ("reflection", "plan_revised")]
    assert [(j.kind, j.message) for j in journal] == [(e.kind, e.message) for e in emitted]
    assert "plan_revised" in [j.kind for j in journal] and journal[0].created_at is not None


async def test_a_critique_that_always_says_revise_is_bounded(
    pool: asyncpg.Pool[Any],
    model: tuple[FakeOpenAIServer, OpenAIChatModel],
    cell_days_sql: PgSqlTool,
) -> None:
    def lean(key: str, title: str) -> ScriptedHypothesis:
        check = ScriptedCheck(
            f"{key}_c",
            f"Check of {title}",
            f"SELECT 1 AS {key}",
            verdict="confirmed",
            strength=0.3,
            evidence="a little",
        )
        return ScriptedHypothesis(key, title, 0.5, [check])

    def against(key: str, title: str) -> ScriptedHypothesis:
        check = ScriptedCheck(
            f"{key}_c",
            f"Check of {title}",
            f"SELECT 2 AS {key}",
            verdict="refuted",
            strength=0.3,
            evidence="not much",
        )
        return ScriptedHypothesis(key, title, 0.5, [check])

    revisions = [[lean(f"x{i}", f"Idea {i}")] for i in range(5)]
    script = ReflectiveScript(
        [lean("a", "Idea A"), against("b", "Idea B")],
        revisions=revisions,
        critique={"action": "revise", "reason": "start over, always"},
    )
    settings = ReflectionSettings(max_plan_revisions=1, reflection_every=1)
    events, answer, tree = await analyse(pool, model, cell_days_sql, script, settings)
    assert script.calls["critique"] >= 2, "asked again after the revision, and refused"
    assert len(kinds(events, PlanRevisedEvent)) == 1 and tree.revision == 1
    assert script.calls["revision"] == 1
    assert answer.uncertainty_reason and answer.confidence < 0.7


async def test_contradicting_evidence_is_detected_and_looked_at_again(
    pool: asyncpg.Pool[Any],
    model: tuple[FakeOpenAIServer, OpenAIChatModel],
    cell_days_sql: PgSqlTool,
) -> None:
    checks = [
        ScriptedCheck(
            "attempts",
            "Attempts fell",
            "SELECT 1 AS a",
            verdict="confirmed",
            strength=0.8,
            evidence="attempts -40%",
        ),
        ScriptedCheck(
            "area",
            "Area traffic",
            "SELECT 2 AS b",
            verdict="refuted",
            strength=0.7,
            evidence="area +2%",
        ),
    ]
    script = ReflectiveScript([ScriptedHypothesis("demand", "Demand fell", 0.5, checks)])
    events, _, tree = await analyse(
        pool, model, cell_days_sql, script, critic=False
    )  # numbers alone
    contradiction = next(
        e for e in kinds(events, ReflectionEvent) if "contradiction" in e.triggers
    )
    assert "is confirmed by" in " ".join(contradiction.checkpoints)
    area = next(n for n in tree.nodes.values() if n.context.get("key") == "area")
    retry = next(n for n in tree.nodes.values() if n.context.get("retry_of") == area.id)
    assert area.status == "pruned" and "superseded" in (area.rejection_reason or "")
    assert retry.context["retry_how"] == "wider_window"


async def test_runbook_only_with_missing_data_ends_not_established(
    pool: asyncpg.Pool[Any], database_url: str, tmp_path: Path
) -> None:
    path = missing_data_case(tmp_path / "case", seed=1)
    await load_case_dir(pool, path)
    case = read_case(path)
    sql = await PgSqlTool.connect(database_url)
    try:
        tools = {"sql": sql}
        analyst = DeepAnalyst(
            tree_store=PgTreeStore(pool),
            planner=RunbookPlanner(load_runbooks(), tools=tools),
            tools=tools,
            reflection=ON,
        )
        ctx = PlanningContext(question=case.question, goal=case.question, language="en")
        events = [e async for e in analyst.run(ctx, user_id=6, chat_id=6)]
    finally:
        await sql.close()
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None
    assert answer.synthesis.not_established and answer.confidence < 0.5
    assert "The cause is not established" in answer.text
    assert "availability: no baseline data in the window" in answer.text
    assert "Data that would settle it" in answer.text or "Needed: data for" in answer.text
    assert "Is there another source for it" in answer.text
    assert "Ruled out:" in answer.text and "Lower demand in the area (0.0" in answer.text
    assert answer.uncertainty_reason and "not established" in answer.uncertainty_reason
    assert [e.revision for e in kinds(events, PlanRevisedEvent)] == [1]
    assert len(kinds(events, ReflectionEvent)) >= 2
