"""The agent planner (LLM_PLANNER=agent) end to end: a model that calls
`hypothesis_tree_action` through the real OpenAIChatModel and the fake OpenAI server (real
HTTP), checks run by the real read-only SQL tool, trees in PostgreSQL.

(a) the model's hypothesis and its check reach the saved tree and the report; (b) the
runbooks' hypotheses come first and the model's additions leave their figures as they
were and cannot establish a cause of their own; (c) models that answer with garbage,
unknown actions or endless tool calls are bounded and the answer is still clear.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from benchmarks.harness.adversaries import ADVERSARIES, adversary_script
from benchmarks.incidents.case import read_case
from benchmarks.incidents.reflection_cases import missing_data_case
from demo.loader import load_case_dir
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.errors import LLMResponseError
from reasoning_core.events import ErrorEvent, answer_of
from reasoning_core.explore.budgets import Budgets
from reasoning_core.explore.policy import ExplorationPolicy
from reasoning_core.llm import prompts
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.models import Answer, Tree
from reasoning_core.planners.agent import ToolAgent
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.planners.runbook_first import MODEL_ONLY_MAX, RunbookFirstPlanner
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.reflection.reflector import ReflectionSettings
from reasoning_core.runbooks import RunbookSet, load_runbooks
from reasoning_core.tools.base import Tool
from reasoning_core.tools.sql_check import refusal_reason
from reasoning_core.tree.synthesis import ESTABLISHED_MIN
from reasoning_core.tree.tool import TOOL_NAME
from storage.sql_tool import PgSqlTool
from storage.trees import PgTreeStore

POLICY = ExplorationPolicy(stop_confidence=1.0, contradiction_threshold=0.0)
REVISE_ONCE = ReflectionSettings(max_plan_revisions=1, reflection_every=3)
BUDGETS = Budgets(deadline_sec=60.0)
AVAILABILITY = "SELECT min(availability) AS min_availability FROM demo.cell_days"
_TREE = re.compile(r"Tree: (\w+)")
_HYPOTHESIS_NODE = re.compile(r"Hypothesis node: (\S+)\.")
_CHECK = re.compile(r'<check node="([^"]+)">')
_ROW = re.compile(r"^\{.*\}$", re.MULTILINE)

Answerer = Callable[[dict[str, Any], int], Reply]


class AgentScript:
    """A fake model for the agent's three sessions (and the wording call): each answerer
    gets the request and the round within its session; `calls` counts requests by kind."""

    def __init__(self, hypotheses: Answerer, checks: Answerer, judge: Answerer) -> None:
        self.answerers = {"hypotheses": hypotheses, "checks": checks, "judge": judge}
        self.calls: Counter[str] = Counter()

    def __call__(self, request: dict[str, Any]) -> Reply:
        system = str(request["messages"][0]["content"])
        kind = next(
            (k for k, p in KINDS.items() if system == p),
            "synthesis" if system == prompts.DEEP_SYNTHESIS_SYSTEM else "other",
        )
        self.calls[kind] += 1
        if kind == "synthesis":
            return Reply.json({"recommendations": ["Check the cell's alarms"]})
        if kind == "other":
            return Reply.json({"answer": "?"})
        rounds = sum(1 for m in request["messages"] if m["role"] == "assistant")
        return self.answerers[kind](request, rounds)


KINDS = {
    "hypotheses": prompts.AGENT_HYPOTHESES_SYSTEM,
    "checks": prompts.AGENT_CHECKS_SYSTEM,
    "judge": prompts.AGENT_JUDGE_SYSTEM,
}


def user_text(request: dict[str, Any]) -> str:
    return str(request["messages"][1]["content"])


def tree_call(request: dict[str, Any], **arguments: Any) -> tuple[str, dict[str, Any]]:
    found = _TREE.search(user_text(request))
    return TOOL_NAME, {"tree_id": found.group(1) if found else "?", **arguments}


def add_hypothesis(title: str, prior: float) -> Answerer:
    def answer(request: dict[str, Any], rounds: int) -> Reply:
        if rounds:
            return Reply.text("Added.")
        hypothesis = {"title": title, "description": f"{title}: the data would show it"}
        return Reply.tool_calls_of(
            tree_call(request, action="add_child", parent_id="root", prior=prior, **hypothesis),
            (TOOL_NAME, "{not json"),  # garbage among good calls costs only itself
        )

    return answer


def add_check(*queries: str) -> Answerer:
    """One check per round, in order (a refused one is rewritten by the next)."""

    def answer(request: dict[str, Any], rounds: int) -> Reply:
        if rounds >= len(queries):
            return Reply.text("Checks added.")
        node = _HYPOTHESIS_NODE.search(user_text(request))
        child = {"title": "lowest_availability", "description": "Lowest availability"}
        check = {"tool": "sql", "query": queries[rounds]}
        parent = node.group(1) if node else "?"
        return Reply.tool_call(
            *tree_call(request, action="add_child", parent_id=parent, check=check, **child)
        )

    return answer


def judge(confirmed: bool, confidence: float, evidence: Callable[[str], str]) -> Answerer:
    def answer(request: dict[str, Any], rounds: int) -> Reply:
        if rounds == 1:  # where the draft stands after the verdicts
            return Reply.tool_call(*tree_call(request, action="get_synthesis"))
        if rounds:
            return Reply.text("Judged.")
        text = user_text(request)
        result = {"confirmed": confirmed, "evidence": evidence(text)}
        return Reply.tool_calls_of(
            *(
                tree_call(
                    request,
                    action="set_result",
                    parent_id=node,
                    result=result,
                    confidence=confidence,
                )
                for node in _CHECK.findall(text)
            )
        )

    return answer


def lowest(text: str) -> str:
    row = json.loads(_ROW.findall(text)[0])
    return f"min availability {row['min_availability']}%"


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def chat(llm: FakeOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    model = OpenAIChatModel(base_url=llm.base_url, api_key="test", model="fake", timeout=5.0)
    yield model
    await model.aclose()


def agent_planner(
    chat: OpenAIChatModel, runbooks: RunbookSet, tools: dict[str, Tool], *, max_rounds: int = 4
) -> tuple[RunbookFirstPlanner, RunbookPlanner]:
    """As bot/wiring/deep.py builds it for LLM_PLANNER=agent."""
    runbook = RunbookPlanner(runbooks, tools=tools)
    agent = ToolAgent(
        chat,
        budgets=BUDGETS,
        tools=tuple(tools),
        max_rounds=max_rounds,
        schema_description="Tables: demo.cell_days(cellname, day, availability, ...)",
        query_gates={"sql": partial(refusal_reason, schemas=["demo"])},
    )
    return RunbookFirstPlanner(runbook, agent), runbook


async def analyse(
    pool: asyncpg.Pool[Any],
    planner: RunbookFirstPlanner | RunbookPlanner,
    *,
    fallback: RunbookPlanner | None,
    tools: dict[str, Tool],
    ctx: PlanningContext,
    reflection: ReflectionSettings | None = None,
) -> tuple[Answer, Tree]:
    analyst = DeepAnalyst(
        tree_store=PgTreeStore(pool),
        planner=planner,
        fallback_planner=fallback,
        tools=tools,
        policy=POLICY,
        budgets=BUDGETS,
        reflection=reflection,
    )
    events = [e async for e in analyst.run(ctx, user_id=7, chat_id=70)]
    assert not [e for e in events if isinstance(e, ErrorEvent)], events[-1]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    return answer, await PgTreeStore(pool).load(answer.tree_id or "")


async def test_the_models_hypothesis_and_its_sql_check_reach_the_tree_and_the_report(
    pool: asyncpg.Pool[Any],
    cell_days_sql: PgSqlTool,
    llm: FakeOpenAIServer,
    chat: OpenAIChatModel,
) -> None:
    script = AgentScript(
        add_hypothesis("Cell outage", 0.6),
        add_check("DELETE FROM demo.cell_days", f"{AVAILABILITY} WHERE day >= DATE '2024-05-08'"),
        judge(True, 0.9, lowest),
    )
    llm.script(script)
    tools: dict[str, Tool] = {"sql": cell_days_sql}
    planner, runbook = agent_planner(chat, RunbookSet([]), tools)  # no runbook: the model plans
    ctx = PlanningContext(question="Why did cell 12345 go quiet?", goal="Find why")
    answer, tree = await analyse(pool, planner, fallback=runbook, tools=tools, ctx=ctx)

    assert answer.synthesis is not None and answer.synthesis.primary.id == "llm_cell_outage"
    assert answer.confidence > ESTABLISHED_MIN  # alone, the model plans with no ceiling
    assert "Cell outage" in answer.text and "min availability 60.0%" in answer.text
    [check] = [n for n in tree.nodes.values() if n.node_type == "verification"]
    assert check.status == "completed" and check.context["query"].startswith(AVAILABILITY)
    assert check.result is not None and check.result.data["rows"] == 1
    assert check.result.has_data and check.result.confirmed is True
    assert dict(script.calls) == {"hypotheses": 2, "checks": 3, "judge": 3, "synthesis": 1}
    last_judging = [r for r in llm.requests if r["messages"][0]["content"] == KINDS["judge"]][-1]
    draft = json.loads(last_judging["messages"][-1]["content"])
    assert draft["synthesis"]["primary"]["title"] == "Cell outage"
    # the refused write came back to the model as an error and was rewritten
    check_requests = [r for r in llm.requests if r["messages"][0]["content"] == KINDS["checks"]]
    refusal = json.loads(check_requests[1]["messages"][-1]["content"])
    assert refusal["ok"] is False and "would refuse this query" in refusal["error"]
    offered = check_requests[0]["tools"][0]["function"]
    assert offered["name"] == TOOL_NAME
    actions = offered["parameters"]["properties"]["action"]["enum"]
    assert actions == ["add_child", "reject", "get_status"]
    judging = next(r for r in llm.requests if r["messages"][0]["content"] == KINDS["judge"])
    judged = judging["tools"][0]["function"]["parameters"]["properties"]["action"]["enum"]
    assert judged == ["set_result", "get_synthesis", "get_status"]


@dataclass(frozen=True)
class Case:
    ctx: PlanningContext
    tools: dict[str, Tool]


@pytest.fixture
async def missing_data(
    pool: asyncpg.Pool[Any], database_url: str, tmp_path: Path
) -> AsyncIterator[Case]:
    """A demo case whose decisive counter is missing, and the SQL tool over it: the
    runbooks alone settle nothing and revise their plan once, which is where the model
    may add (RunbookFirstPlanner)."""
    path = missing_data_case(tmp_path / "case", seed=1)
    await load_case_dir(pool, path)
    case = read_case(path)
    sql = await PgSqlTool.connect(database_url)
    ctx = PlanningContext(question=case.question, goal=case.question, language="en")
    yield Case(ctx, {"sql": sql})
    await sql.close()


def first_level(tree: Tree) -> list[tuple[str, float | None]]:
    nodes = [n for n in tree.nodes.values() if n.depth == 1]
    return [(str(n.context.get("key")), n.confidence) for n in nodes]


async def test_runbooks_come_first_and_a_confident_wrong_model_cannot_make_it_worse(
    pool: asyncpg.Pool[Any], missing_data: Case, llm: FakeOpenAIServer, chat: OpenAIChatModel
) -> None:
    script = AgentScript(
        add_hypothesis("DNS misconfiguration", 0.95),
        add_check("SELECT count(*) AS n FROM demo.cells"),
        judge(True, 1.0, lambda _text: "Clearly proven."),
    )
    llm.script(script)
    tools, ctx = missing_data.tools, missing_data.ctx
    runbook = RunbookPlanner(load_runbooks(), tools=tools)
    alone, alone_tree = await analyse(
        pool, runbook, fallback=None, tools=tools, ctx=ctx, reflection=REVISE_ONCE
    )
    planner, fallback = agent_planner(chat, load_runbooks(), tools)
    added, tree = await analyse(
        pool, planner, fallback=fallback, tools=tools, ctx=ctx, reflection=REVISE_ONCE
    )

    assert script.calls["hypotheses"] >= 1 and script.calls["judge"] >= 1  # the model added
    # the runbooks' hypotheses first, each with the figure it has without the model
    levels, runbooks_alone = first_level(tree), first_level(alone_tree)
    assert levels[: len(runbooks_alone)] == runbooks_alone
    assert [key for key, _ in levels[len(runbooks_alone) :]] == ["llm_dns_misconfiguration"]
    # the model's "clearly proven" check ran and counted, but its cause stays a candidate
    dns = next(
        n for n in tree.nodes.values() if n.context.get("key") == "llm_dns_misconfiguration"
    )
    [dns_check] = [n for n in tree.nodes.values() if n.parent_id == dns.id]
    assert dns_check.result is not None and dns_check.result.confirmed is True
    assert dns.confidence is not None and dns.confidence <= MODEL_ONLY_MAX < ESTABLISHED_MIN
    assert alone.synthesis is not None and added.synthesis is not None
    assert alone.synthesis.not_established and added.synthesis.not_established
    assert added.confidence < ESTABLISHED_MIN
    assert "The cause is not established" in added.text


def garbage(request: dict[str, Any], rounds: int) -> Reply:
    """Calls that parse as tool calls and mean nothing: broken JSON, other tools, unknown
    actions, wrong types, a huge argument, and an action the step does not offer."""
    return Reply.tool_calls_of(
        (TOOL_NAME, "{not json"),
        ("shell", {"command": "rm -rf /"}),
        (TOOL_NAME, {"action": "drop_table"}),
        tree_call(request, action="add_child", parent_id="root", description=["a", "list"]),
        tree_call(request, action="add_child", parent_id="root", description="x" * 30_000),
        tree_call(request, action="create_tree", description="a tree of my own"),
        tree_call(request, action="set_result", parent_id="root", confidence=7),
    )


def endless(request: dict[str, Any], rounds: int) -> Reply:
    """Never done: another status call, round after round."""
    return Reply.tool_call(*tree_call(request, action="get_status"))


@pytest.mark.parametrize("answerer", [garbage, endless], ids=["garbage", "endless"])
async def test_garbage_and_endless_tool_calls_are_bounded_and_the_answer_is_clear(
    answerer: Answerer,
    pool: asyncpg.Pool[Any],
    missing_data: Case,
    llm: FakeOpenAIServer,
    chat: OpenAIChatModel,
) -> None:
    script = AgentScript(answerer, answerer, answerer)
    llm.script(script)
    planner, fallback = agent_planner(chat, load_runbooks(), missing_data.tools, max_rounds=3)
    answer, tree = await analyse(
        pool,
        planner,
        fallback=fallback,
        tools=missing_data.tools,
        ctx=missing_data.ctx,
        reflection=REVISE_ONCE,
    )
    # one session (the revision's hypotheses) of at most 3 rounds; nothing was added
    assert script.calls["hypotheses"] == 3 and llm.request_count == 3
    seen = [m for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
    replies = [json.loads(m["content"]) for m in seen]
    if answerer is garbage:  # each garbage call was answered with what was wrong with it
        errors = " | ".join(r["error"] for r in replies)
        for words in ("bad arguments", "unknown tool 'shell'", "not available", "longer than"):
            assert words in errors
        assert not any(r["ok"] for r in replies)
    assert not [n for n in tree.nodes.values() if str(n.context.get("key")).startswith("llm_")]
    assert answer.synthesis is not None and answer.synthesis.not_established
    assert "The cause is not established" in answer.text


@pytest.mark.parametrize("name", sorted(ADVERSARIES))
async def test_every_adversary_model_leaves_the_runbooks_answer(
    name: str,
    pool: asyncpg.Pool[Any],
    missing_data: Case,
    llm: FakeOpenAIServer,
    chat: OpenAIChatModel,
) -> None:
    llm.script(adversary_script(name))  # each answers the agent in text, calling no tool
    planner, fallback = agent_planner(chat, load_runbooks(), missing_data.tools)
    answer, tree = await analyse(
        pool,
        planner,
        fallback=fallback,
        tools=missing_data.tools,
        ctx=missing_data.ctx,
        reflection=REVISE_ONCE,
    )
    assert llm.request_count == 1  # one session, ended by the first text reply
    assert not [n for n in tree.nodes.values() if str(n.context.get("key")).startswith("llm_")]
    assert answer.synthesis is not None and answer.synthesis.not_established
    assert "The cause is not established" in answer.text


async def test_with_no_runbook_a_useless_model_gets_a_plain_refusal_not_a_traceback(
    pool: asyncpg.Pool[Any], cell_days_sql: PgSqlTool, llm: FakeOpenAIServer, chat: OpenAIChatModel
) -> None:
    llm.script(AgentScript(garbage, garbage, garbage))
    tools: dict[str, Tool] = {"sql": cell_days_sql}
    planner, runbook = agent_planner(chat, RunbookSet([]), tools, max_rounds=2)
    analyst = DeepAnalyst(
        tree_store=PgTreeStore(pool),
        planner=planner,
        fallback_planner=runbook,
        tools=tools,
        policy=POLICY,
        budgets=BUDGETS,
    )
    ctx = PlanningContext(question="Why did cell 12345 go quiet?", goal="Find why")
    events = [e async for e in analyst.run(ctx, user_id=7, chat_id=70)]
    answer = answer_of(events[-1])
    assert llm.request_count == 2  # the hypotheses' session, bounded at 2 rounds
    assert answer is not None and answer.error == "deep_failed"
    assert answer.text.startswith("Sorry — I could not finish the deep analysis: ")
    assert "Traceback" not in answer.text and answer.tree_id is not None


async def test_a_session_keeps_to_the_budgets_calls_and_deadline(
    llm: FakeOpenAIServer, chat: OpenAIChatModel
) -> None:
    ctx = PlanningContext(question="Why did cell 12345 go quiet?", goal="Find why")
    few_calls = ToolAgent(chat, budgets=Budgets(max_llm_calls=2), max_rounds=50)
    llm.script(AgentScript(endless, endless, endless))
    with pytest.raises(LLMResponseError, match=r"no hypothesis .*ended: rounds"):
        await few_calls.propose_hypotheses(ctx)
    assert llm.request_count == 2

    short = ToolAgent(chat, budgets=Budgets(deadline_sec=0.6))
    llm.script(lambda _request: Reply.hang())
    # ended at half the deadline (0.3 s), before the LLM's 5 s timeout could fail the call
    with pytest.raises(LLMResponseError, match=r"ended: deadline"):
        await short.propose_hypotheses(ctx)
