"""The explorer and DeepAnalyst over real PostgreSQL, with a scripted planner and tools.

The planner double answers from a table (no LLM: the LLM planner has its own
tests over the fake OpenAI server); tools answer instantly and record what ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import asyncpg
import pytest

from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.errors import LLMHTTPError, LLMResponseError
from reasoning_core.events import ErrorEvent, Event, NodeRejectedEvent, ReasoningEvent, answer_of
from reasoning_core.explore.budgets import Budgets
from reasoning_core.explore.policy import ExplorationPolicy, path_of
from reasoning_core.explore.scheduler import PriorityScheduler
from reasoning_core.models import Answer, Evidence, Synthesis, Tree
from reasoning_core.ports.planning import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)
from reasoning_core.tools.base import ToolRequest, ToolResult
from reasoning_core.tree.aggregation import adjusted_confidence, logit, sigmoid, weight
from storage.trees import PgTreeStore

T = TypeVar("T")
CTX = PlanningContext(question="Why did traffic drop on cell 12345?", goal="Find the cause")
NO_SHORTCUTS = ExplorationPolicy(stop_confidence=1.0, contradiction_threshold=0.0)


def hyp(key: str, prior: float = 0.5, title: str | None = None) -> HypothesisProposal:
    return HypothesisProposal(key=key, title=title or f"{key.title()} cause", prior=prior)


def check(key: str, tool: str = "sql", gain: float = 0.5, cost: float = 1.0) -> CheckProposal:
    return CheckProposal(
        key=key, description=f"check {key}", tool=tool,
        request=ToolRequest(query=f"SELECT '{key}'"), gain=gain, cost=cost,
    )  # fmt: skip


def ev(confirmed: bool | None, c: float, has_data: bool = True) -> Evidence:
    return Evidence(confirmed=confirmed, confidence=c, text=f"value {c}", has_data=has_data)


class ScriptedPlanner:
    """A Planner answering from tables; records every call in order."""

    def __init__(
        self,
        plan: Plan | Exception,
        checks: dict[str, list[CheckProposal] | Exception] | None = None,
        verdicts: dict[str, Evidence | Exception] | None = None,
        *,
        name: str = "scripted",
        branches: dict[str, Plan] | None = None,
        primary: str | None = None,
    ) -> None:
        self.name = name
        self._plan, self._checks, self._verdicts = plan, checks or {}, verdicts or {}
        self._branches = branches or {}
        self._primary = primary
        self.calls: list[tuple[str, str]] = []
        self.check_contexts: list[PlanningContext] = []

    async def propose_hypotheses(self, ctx: PlanningContext) -> Plan:
        for title, plan in self._branches.items():
            if f"{title!r} is still undecided" in ctx.goal:
                self.calls.append(("branch", title))
                return plan
        if "is still undecided" in ctx.goal:
            self.calls.append(("branch", ""))
            return Plan()
        self.calls.append(("hypotheses", ctx.goal))
        return _give(self._plan)

    async def propose_checks(
        self, ctx: PlanningContext, hypothesis: HypothesisProposal
    ) -> list[CheckProposal]:
        self.calls.append(("checks", hypothesis.key))
        self.check_contexts.append(ctx)
        return _give(self._checks.get(hypothesis.key, []))

    async def interpret(
        self, ctx: PlanningContext, h: HypothesisProposal, c: CheckProposal, r: ToolResult
    ) -> Evidence:
        self.calls.append(("interpret", c.key))
        return _give(self._verdicts.get(c.key, ev(None, 0.0)))

    async def synthesize(
        self, ctx: PlanningContext, tree: Tree, synthesis: Synthesis
    ) -> Synthesis:
        self.calls.append(("synthesize", ""))
        chosen = next((r for r in synthesis.ranking if r.id == self._primary), synthesis.primary)
        return synthesis.model_copy(update={"primary": chosen, "recommendations": ["Do X"]})


def _give(value: T | Exception) -> T:
    if isinstance(value, Exception):
        raise value
    return value


class RecordingTool:
    """An instant tool; `results` by query text, else one row. With `gather` set, the
    first runs wait (up to 10 s) until that many run at once; `peak` is the most that did."""

    def __init__(self, name: str = "sql", results: dict[str, ToolResult] | None = None) -> None:
        self.name = name
        self.results = results or {}
        self.ran: list[str] = []
        self.delay = 0.0
        self.gather = 0
        self.running = self.peak = 0
        self._gathered = asyncio.Event()

    async def run(self, request: ToolRequest) -> ToolResult:
        self.ran.append(request.query or "")
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            if self.running >= self.gather:
                self._gathered.set()
            if self.gather:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._gathered.wait(), 10)
            if self.delay:
                await asyncio.sleep(self.delay)
        finally:
            self.running -= 1
        default = ToolResult(tool=self.name, ok=True, rows=[{"v": 1}], row_count=1)
        return self.results.get(request.query or "", default)


@pytest.fixture
def store(pool: asyncpg.Pool[Any]) -> PgTreeStore:
    return PgTreeStore(pool)


def analyst(store: PgTreeStore, planner: Any, tool: RecordingTool, **kw: Any) -> DeepAnalyst:
    """`concurrency=n`: n model calls and n tool runs at once."""
    kw.setdefault("policy", NO_SHORTCUTS)
    if (n := kw.pop("concurrency", None)) is not None:
        kw.update(model_concurrency=n, tool_concurrency=n)
    return DeepAnalyst(tree_store=store, planner=planner, tools={tool.name: tool}, **kw)


async def run(a: DeepAnalyst, **kw: Any) -> tuple[list[Event], Answer]:
    events = [e async for e in a.run(CTX, user_id=7, chat_id=70, **kw)]
    answer = answer_of(events[-1])
    assert events[-1].kind == "answer" and answer is not None
    return events, answer


def three_by_three() -> ScriptedPlanner:
    return ScriptedPlanner(
        Plan(hypotheses=[hyp("outage"), hyp("demand"), hyp("neighbour", prior=0.3)]),
        {
            "outage": [check("o1"), check("o2"), check("o3")],
            "demand": [check("d1"), check("d2"), check("d3")],
            "neighbour": [check("n1"), check("n2"), check("n3")],
        },
        {
            "o1": ev(True, 0.9), "o2": ev(True, 0.8), "o3": ev(True, 0.7),
            "d1": ev(False, 0.8), "d2": ev(False, 0.6), "d3": ev(None, 0.9),
            "n1": ev(True, 0.3), "n2": ev(False, 0.9), "n3": ev(True, 0.2, has_data=False),
        },
    )  # fmt: skip


async def test_three_hypotheses_give_the_right_primary_and_confidence(
    store: PgTreeStore,
) -> None:
    planner, tool = three_by_three(), RecordingTool()
    events, answer = await run(analyst(store, planner, tool))
    p_outage = sigmoid(weight(0.9) + weight(0.8) + weight(0.7))
    p_demand = sigmoid(weight(-0.8) + weight(-0.6))
    p_neighbour = sigmoid(logit(0.3) + weight(0.3) + weight(-0.9) + weight(0.2))
    synthesis = answer.synthesis
    assert synthesis is not None
    assert synthesis.primary.id == "outage"
    assert synthesis.confidence == pytest.approx(p_outage)
    assert [r.id for r in synthesis.ranking] == ["outage", "neighbour", "demand"]
    assert [r.confidence for r in synthesis.ranking] == pytest.approx(
        [p_outage, p_neighbour, p_demand]
    )
    assert synthesis.recommendations == ["Do X"]
    assert answer.strategy == "deep" and answer.planner == "scripted"
    assert answer.confidence == pytest.approx(p_outage) and answer.uncertainty_reason is None
    assert "Primary cause: Outage cause" in answer.text
    assert len(tool.ran) == 9
    # persisted: a fresh load sees every node and the result of every check
    saved = await store.load(answer.tree_id or "")
    assert saved.status == "completed" and len(saved.nodes) == 13
    result = saved.nodes["h1.v1"].result
    assert result is not None
    seen = result.data.pop("seen")  # the rows the tool returned, kept for the analysis page
    assert result == ev(True, 0.9)
    assert seen == {"columns": ["v"], "rows": [["1"]], "row_count": 1, "truncated": False}
    assert saved.synthesis is not None and saved.synthesis.primary.id == "outage"
    kinds = [e.kind for e in events]
    assert kinds[0] == "tree_created" and kinds[-2:] == ["synthesis", "answer"]
    assert kinds.count("node_added") == 12 and kinds.count("node_completed") == 9
    assert "Deep analysis · 9/9 checks · 0 hypotheses open" in events[-2].message
    assert all(e.message for e in events)


async def test_a_plan_conclusion_answers_with_primary_none(store: PgTreeStore) -> None:
    conclusion = Evidence(
        confirmed=True, confidence=0.9, text="No traffic drop on 12345", has_data=True
    )
    planner = ScriptedPlanner(Plan(conclusion=conclusion))
    _, answer = await run(analyst(store, planner, RecordingTool()))
    assert answer.synthesis is not None
    assert answer.synthesis.primary.id == "none"
    assert answer.synthesis.primary.title == "No traffic drop on 12345"
    assert answer.confidence == pytest.approx(sigmoid(weight(0.9)))
    # no symptom measured by this planner: the report opens with its conclusion
    assert answer.text.startswith("Conclusion: No traffic drop on 12345 (0.95)")


async def test_bad_hypotheses_are_dropped_and_the_analysis_continues(
    store: PgTreeStore,
) -> None:
    proposals = [
        hyp("outage"),
        hyp("outage", title="Outage again"),  # duplicate key
        hyp("demand", title="Outage cause"),  # duplicate title
        hyp("blank", title="   "),  # no title
        hyp("b"), hyp("c"), hyp("d"), hyp("e"), hyp("f"), hyp("g"),  # g: beyond max_branches (6)
    ]  # fmt: skip
    planner = ScriptedPlanner(
        Plan(hypotheses=proposals),
        {k: [check(f"{k}1")] for k in ["outage", "b", "c", "d", "e", "f", "g"]},
        {"outage1": ev(True, 0.9)},
    )
    events, answer = await run(analyst(store, planner, RecordingTool()))
    dropped = [e for e in events if isinstance(e, NodeRejectedEvent) and e.dropped]
    reasons = " | ".join(e.reason for e in dropped)
    assert len(dropped) == 4
    assert "duplicate key 'outage'" in reasons and "title already exists" in reasons
    assert "no title" in reasons and "max_branches (6)" in reasons
    assert answer.synthesis is not None and answer.synthesis.primary.id == "outage"
    assert [r.id for r in answer.synthesis.ranking][1:] == ["b", "c", "d", "e", "f"]


async def test_unknown_tools_failures_and_planner_errors_become_rejected_nodes(
    store: PgTreeStore,
) -> None:
    failed = ToolResult.failure("sql", "timeout", "query timed out after 2000 ms")
    planner = ScriptedPlanner(
        Plan(hypotheses=[hyp("outage"), hyp("demand"), hyp("neighbour")]),
        {
            "outage": [check("o1"), check("o2", tool="shell"), check("o3")],
            "demand": LLMResponseError("no usable check"),
            "neighbour": [check("n1")],
        },
        {"o1": ev(True, 0.9), "n1": LLMResponseError("not JSON")},
    )
    tool = RecordingTool(results={"SELECT 'o3'": failed})
    _, answer = await run(analyst(store, planner, tool))
    assert sorted(tool.ran) == ["SELECT 'n1'", "SELECT 'o1'", "SELECT 'o3'"]
    tree = await store.load(answer.tree_id or "")
    assert tree.nodes["h1.v2"].status == "rejected"
    assert "unknown tool 'shell' (available: sql)" in (tree.nodes["h1.v2"].rejection_reason or "")
    assert "sql timeout: query timed out" in (tree.nodes["h1.v3"].rejection_reason or "")
    assert tree.nodes["h2"].status == "rejected"
    assert "could not interpret the result" in (tree.nodes["h3.v1"].rejection_reason or "")
    assert answer.synthesis is not None and answer.synthesis.primary.id == "outage"
    not_checked = answer.text.split("Could not check:")[1]
    for fragment in ("unknown tool 'shell'", "sql timeout", "could not plan its checks",
                     "could not interpret"):  # fmt: skip
        assert fragment in not_checked


async def test_checks_run_concurrently_up_to_the_limit(store: PgTreeStore) -> None:
    tool = RecordingTool()
    tool.gather = 4  # the first runs wait for each other: in a row, the peak would be 1
    planner = three_by_three()
    a = analyst(store, planner, tool, concurrency=4)
    await run(a)
    assert len(tool.ran) == 9
    assert tool.peak == 4  # 4 tool runs at once, never more


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("depth_first", ["SELECT 'a1'", "SELECT 'a2'", "SELECT 'b1'", "SELECT 'b2'"]),
        ("breadth_first", ["SELECT 'a1'", "SELECT 'a2'", "SELECT 'b1'", "SELECT 'b2'"]),
        ("best_first", ["SELECT 'a1'", "SELECT 'b1'", "SELECT 'b2'", "SELECT 'a2'"]),
    ],
)
async def test_search_order_decides_which_waiting_check_runs_next(
    store: PgTreeStore, order: str, expected: list[str]
) -> None:
    # One tool slot, slow tools: a1 takes it at once; a2, b1 and b2 wait for it, and the
    # order decides between them (best_first: b's prior is higher, its checks go first).
    planner = ScriptedPlanner(
        Plan(hypotheses=[hyp("a", prior=0.3), hyp("b", prior=0.6)]),
        {"a": [check("a1"), check("a2")], "b": [check("b1"), check("b2")]},
        {k: ev(None, 0.5) for k in ("a1", "a2", "b1", "b2")},
    )
    policy = NO_SHORTCUTS.model_copy(update={"order": order, "branching_threshold": 0.5})
    tool = RecordingTool()
    tool.delay = 0.1
    a = analyst(store, planner, tool, model_concurrency=1, tool_concurrency=1, policy=policy)
    await run(a)
    assert tool.ran == expected
    interpreted = [key for kind, key in planner.calls if kind == "interpret"]
    assert interpreted == [q.split("'")[1] for q in expected]  # each as its tool returns


async def test_an_undecided_hypothesis_is_branched_into_sub_hypotheses(
    store: PgTreeStore,
) -> None:
    planner = ScriptedPlanner(
        Plan(hypotheses=[hyp("outage"), hyp("demand")]),
        {
            "outage": [check("o1")],
            "demand": [check("d1")],
            "power": [check("p1")],
            "radio": [check("r1")],
        },
        {"o1": ev(True, 0.2), "d1": ev(False, 0.9), "p1": ev(True, 0.9), "r1": ev(False, 0.8)},
        branches={"Outage cause": Plan(hypotheses=[hyp("power"), hyp("radio"), hyp("outage")])},
    )
    events, answer = await run(analyst(store, planner, RecordingTool()))
    tree = await store.load(answer.tree_id or "")
    assert ("branch", "Outage cause") in planner.calls
    assert tree.nodes["h1.h1"].context["key"] == "power" and tree.nodes["h1.h1.v1"].depth == 3
    assert "h1.h3" not in tree.nodes  # "outage" again: a duplicate key, dropped
    p_power, p_radio = sigmoid(weight(0.9)), sigmoid(weight(-0.8))
    p_outage = sigmoid(logit(1 - (1 - p_power) * (1 - p_radio)) + weight(0.2))
    assert tree.nodes["h1"].confidence == pytest.approx(p_outage)
    assert any("undecided" in e.message for e in events)


async def test_strong_contradiction_prunes_the_remaining_checks(store: PgTreeStore) -> None:
    planner = ScriptedPlanner(
        Plan(hypotheses=[hyp("outage")]),
        {"outage": [check("o1"), check("o2"), check("o3")]},
        # o1 alone leaves p = (1 - 0.6) / 2 = 0.2; o2 brings it below the 0.05 threshold
        {"o1": ev(False, 0.6), "o2": ev(False, 0.9), "o3": ev(True, 0.9)},
    )
    policy = ExplorationPolicy(order="depth_first", stop_confidence=1.0)
    tool = RecordingTool()
    _, answer = await run(analyst(store, planner, tool, concurrency=1, policy=policy))
    assert len(tool.ran) == 2
    tree = await store.load(answer.tree_id or "")
    assert tree.nodes["h1.v3"].status == "pruned"
    assert "strongly contradicted" in (tree.nodes["h1.v3"].rejection_reason or "")
    assert "Could not check" not in answer.text  # pruned on purpose, not a failure


async def test_early_stop_when_the_root_is_confident(store: PgTreeStore) -> None:
    planner = three_by_three()
    policy = ExplorationPolicy(order="depth_first", stop_confidence=0.9)
    tool = RecordingTool()
    events, answer = await run(analyst(store, planner, tool, concurrency=1, policy=policy))
    assert len(tool.ran) == 1  # o1 (0.9) alone makes the root confident: (1 + 0.9) / 2 > 0.9
    assert any(isinstance(e, ReasoningEvent) and e.stopped for e in events)
    assert answer.confidence >= 0.9


async def test_the_llm_call_budget_prunes_what_is_left_and_says_so(store: PgTreeStore) -> None:
    planner = three_by_three()
    budgets = Budgets(max_llm_calls=6)
    _, answer = await run(analyst(store, planner, RecordingTool(), concurrency=1, budgets=budgets))
    assert len(planner.calls) == 6
    assert "budget exhausted: 6 planner calls used" in answer.text
    assert answer.synthesis is not None


async def test_the_deadline_ends_the_growth_but_not_the_answer(store: PgTreeStore) -> None:
    tool = RecordingTool()
    tool.delay = 5.0
    budgets = Budgets(deadline_sec=0.3)
    events, answer = await run(analyst(store, three_by_three(), tool, budgets=budgets))
    assert any("deadline reached" in e.message for e in events)
    assert answer.synthesis is not None and answer.confidence < 0.7
    assert answer.uncertainty_reason


async def test_the_fallback_planner_takes_over_when_the_llm_fails(store: PgTreeStore) -> None:
    broken = ScriptedPlanner(LLMHTTPError("HTTP 500", status=500), name="llm")
    fallback = three_by_three()
    fallback.name = "runbook"
    _, answer = await run(analyst(store, broken, RecordingTool(), fallback_planner=fallback))
    assert answer.planner == "runbook"
    assert answer.synthesis is not None and answer.synthesis.primary.id == "outage"


async def test_a_planner_failure_without_fallback_is_an_error_answer(
    store: PgTreeStore, caplog: pytest.LogCaptureFixture
) -> None:
    broken = ScriptedPlanner(LLMResponseError("not JSON"), name="llm")
    events, answer = await run(analyst(store, broken, RecordingTool()))
    assert [e.kind for e in events][-2:] == ["error", "answer"]
    assert answer.error == "deep_failed" and answer.confidence == 0.0
    # the user gets an error id; the reason is in the log line with the same id
    error_id = next(e.error_id for e in events if isinstance(e, ErrorEvent) and e.error_id)
    assert answer.uncertainty_reason == f"the analysis could not finish (error {error_id})"
    assert f"give your admin the error id {error_id}" in answer.text
    assert "not JSON" not in answer.text
    [logged] = [r for r in caplog.records if error_id in r.getMessage()]
    assert "not JSON" in logged.getMessage()
    assert answer.tree_id is not None
    assert (await store.load(answer.tree_id)).status == "failed"


async def test_another_users_tree_cannot_be_continued(store: PgTreeStore) -> None:
    _, first = await run(analyst(store, three_by_three(), RecordingTool()))
    other = analyst(store, three_by_three(), RecordingTool())
    events = [e async for e in other.run(CTX, user_id=8, chat_id=80, tree_id=first.tree_id)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.error == "deep_failed"
    assert answer.tree_id is None and "could not finish the deep analysis (error" in answer.text


@pytest.mark.parametrize(
    ("merge", "primary", "check_confidence"),
    [
        # a leads by less than 0.15: its confidence is lowered
        (
            "best_first",
            "a",
            lambda c, pa, pb: c == pytest.approx(adjusted_confidence(pa, pa - pb)),
        ),
        # b: every check conclusive, so its score is its p; a scores pa / 3
        ("weighted_vote", "b", lambda c, pa, pb: c == pytest.approx(pb)),
        # the planner prefers b although the data favour a: half of b's p
        ("llm_synthesis", "b", lambda c, pa, pb: c == pytest.approx(pb / 2)),
    ],
)
async def test_merge_strategies(
    store: PgTreeStore, merge: str, primary: str, check_confidence: Callable[..., bool]
) -> None:
    # a: one strong data check of three (two fail); b: three moderate conclusive checks
    failed = ToolResult.failure("sql", "syntax", "SQL error")
    planner = ScriptedPlanner(
        Plan(hypotheses=[hyp("a"), hyp("b")]),
        {
            "a": [check("a1"), check("a2"), check("a3")],
            "b": [check("b1"), check("b2"), check("b3")],
        },
        {"a1": ev(True, 0.95), "b1": ev(True, 0.3), "b2": ev(True, 0.3), "b3": ev(True, 0.2)},
        primary="b",
    )
    tool = RecordingTool(results={"SELECT 'a2'": failed, "SELECT 'a3'": failed})
    policy = NO_SHORTCUTS.model_copy(update={"merge": merge})
    _, answer = await run(analyst(store, planner, tool, policy=policy))
    pa, pb = sigmoid(weight(0.95)), sigmoid(weight(0.3) + weight(0.3) + weight(0.2))
    assert answer.synthesis is not None and answer.synthesis.primary.id == primary
    assert check_confidence(answer.confidence, pa, pb)
    assert answer.confidence >= 0.7 or answer.uncertainty_reason


async def test_scheduler_hands_slots_to_the_most_urgent_waiter() -> None:
    scheduler = PriorityScheduler(1)
    order: list[str] = []

    async def work(name: str, priority: tuple[float, ...]) -> None:
        async with scheduler.slot(priority):
            order.append(name)
            await asyncio.sleep(0.01)

    async with asyncio.TaskGroup() as group:
        group.create_task(work("first", (5.0,)))
        await asyncio.sleep(0)
        for name, p in (("low", (9.0,)), ("high", (1.0,)), ("mid", (3.0,))):
            group.create_task(work(name, (p[0],)))
    assert order == ["first", "high", "mid", "low"]
    assert scheduler.peak == 1
    assert path_of("h2.v1") > path_of("h1.v3") > path_of("h1") and math.isfinite(1.0)


async def test_resolved_parameters_reach_later_calls_and_survive_a_restart(
    store: PgTreeStore,
) -> None:
    since = datetime(2024, 5, 6, tzinfo=UTC)
    plan = Plan(hypotheses=[hyp("outage")], parameters={"cell": "12345", "since": since})
    planner = ScriptedPlanner(plan, {"outage": [check("o1")]}, {"o1": ev(True, 0.9)})
    _, answer = await run(analyst(store, planner, RecordingTool()))
    assert planner.check_contexts[0].parameters == {"cell": "12345", "since": since}
    tree = await store.load(answer.tree_id or "")
    stored = tree.nodes["h1"].context["plan_parameters"]
    assert stored == {"cell": "12345", "since": "2024-05-06T00:00:00+00:00"}
    # continuing the finished tree runs nothing again and concludes the same way
    again, tool = three_by_three(), RecordingTool()
    _, resumed = await run(analyst(store, again, tool), tree_id=answer.tree_id)
    assert tool.ran == [] and [c for c, _ in again.calls] == ["synthesize"]
    assert resumed.synthesis is not None and resumed.synthesis.primary.id == "outage"
