"""How the explorer schedules checks: shared checks run once, one interpretation per
hypothesis, model and tool limits apart, longest remaining chain first.

Real PostgreSQL (the tree store); the planner is a scripted double that answers
from tables (the LLM planner's own batch interpretation is tested over the fake
OpenAI server in tests/reasoning_core/planners/test_llm_planner.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import asyncpg
import pytest

from reasoning_core.errors import LLMResponseError
from reasoning_core.explore.budgets import Budgets
from reasoning_core.explore.explorer import Explorer
from reasoning_core.explore.policy import (
    ExplorationPolicy,
    chain_priority,
    priority,
    remaining_rounds,
)
from reasoning_core.explore.scheduler import PriorityScheduler
from reasoning_core.models import Evidence, Node, Synthesis, Tree
from reasoning_core.planners.llm.planner import LLMPlanner
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports import BatchInterpreter
from reasoning_core.ports.planning import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)
from reasoning_core.tools.base import ToolRequest, ToolResult
from reasoning_core.tree.manager import TreeManager
from storage.trees import PgTreeStore

CTX = PlanningContext(question="Why did traffic drop on cell 12345?", goal="Find the cause")
GROW_ALL = ExplorationPolicy(stop_confidence=1.0, contradiction_threshold=0.0)


def hyp(key: str, prior: float = 0.5) -> HypothesisProposal:
    return HypothesisProposal(key=key, title=f"{key.title()} cause", prior=prior)


def check(key: str, query: str | None = None) -> CheckProposal:
    request = ToolRequest(query=query or f"SELECT '{key}'")
    return CheckProposal(key=key, description=f"check {key}", tool="sql", request=request)


class Planner:
    """A scripted planner; with `batch`, it interprets a hypothesis's results together."""

    name = "scripted"

    def __init__(
        self,
        hypotheses: list[HypothesisProposal],
        checks: dict[str, list[CheckProposal]],
        verdicts: dict[str, Evidence],
        *,
        plan_delay: float = 0.0,
    ) -> None:
        self._hypotheses, self._checks, self._verdicts = hypotheses, checks, verdicts
        self._plan_delay = plan_delay
        self.calls: list[str] = []
        #: Set once the checks of a hypothesis are proposed, by key.
        self.proposed: dict[str, asyncio.Event] = {h.key: asyncio.Event() for h in hypotheses}

    async def propose_hypotheses(self, ctx: PlanningContext) -> Plan:
        if "is still undecided" in ctx.goal:
            return Plan()
        self.calls.append("hypotheses")
        return Plan(hypotheses=self._hypotheses)

    async def propose_checks(
        self, ctx: PlanningContext, hypothesis: HypothesisProposal
    ) -> list[CheckProposal]:
        self.calls.append(f"checks:{hypothesis.key}")
        await asyncio.sleep(self._plan_delay)
        self.proposed[hypothesis.key].set()
        return self._checks[hypothesis.key]

    async def interpret(
        self, ctx: PlanningContext, h: HypothesisProposal, c: CheckProposal, r: ToolResult
    ) -> Evidence:
        self.calls.append(f"interpret:{h.key}.{c.key}")
        return self._verdicts[c.key]

    async def synthesize(
        self, ctx: PlanningContext, tree: Tree, synthesis: Synthesis
    ) -> Synthesis:
        self.calls.append("synthesize")
        return synthesis


class BatchPlanner(Planner):
    """Interprets all of a hypothesis's results in one call (like the LLM planner);
    `skip` names checks its reply leaves without a verdict."""

    def __init__(self, *args: Any, skip: Sequence[str] = (), **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._skip = set(skip)
        self.batches: list[tuple[str, list[str]]] = []

    async def interpret_checks(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        results: Sequence[tuple[CheckProposal, ToolResult]],
    ) -> list[Evidence | None]:
        self.calls.append(f"interpret_all:{hypothesis.key}")
        self.batches.append((hypothesis.key, [c.key for c, _ in results]))
        return [None if c.key in self._skip else self._verdicts[c.key] for c, _ in results]


class Tool:
    """One row at once; records each run, and can wait for an event first."""

    name = "sql"

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.wait_for: asyncio.Event | None = None

    async def run(self, request: ToolRequest) -> ToolResult:
        self.ran.append(request.query or "")
        if self.wait_for is not None:
            await asyncio.wait_for(self.wait_for.wait(), timeout=5)
        return ToolResult(tool=self.name, ok=True, rows=[{"v": 1}], row_count=1)


def ev(confirmed: bool | None, c: float) -> Evidence:
    return Evidence(confirmed=confirmed, confidence=c, text=f"value {c}", has_data=True)


async def explore(
    pool: asyncpg.Pool[Any], planner: Planner, tool: Tool, **kw: Any
) -> tuple[Explorer, Tree]:
    manager = TreeManager(store=PgTreeStore(pool), max_depth=Budgets().depth_limit)
    await manager.create_tree(CTX.goal, user_id=7, chat_id=70)
    kw.setdefault("policy", GROW_ALL)
    explorer = Explorer(manager=manager, planner=planner, tools={"sql": tool}, **kw)
    _ = [e async for e in explorer.explore(CTX)]
    return explorer, manager.tree


def results_of(tree: Tree) -> dict[str, Evidence | None]:
    return {
        n.context["key"]: n.result for n in tree.nodes.values() if n.node_type == "verification"
    }


def test_the_llm_planner_interprets_together_and_the_runbook_planner_does_not() -> None:
    assert issubclass(LLMPlanner, BatchInterpreter)
    assert not issubclass(RunbookPlanner, BatchInterpreter)  # its verdict rules decide


@pytest.mark.parametrize("kind", [Planner, BatchPlanner])
async def test_a_shared_check_runs_once_and_both_hypotheses_get_its_evidence(
    pool: asyncpg.Pool[Any], kind: type[Planner]
) -> None:
    shared = "SELECT availability FROM cells WHERE cell = $1"
    planner = kind(
        [hyp("outage"), hyp("demand")],
        {
            "outage": [check("avail", shared), check("alarms")],
            "demand": [check("avail_again", shared), check("attempts")],
        },
        {
            "avail": ev(True, 0.8), "alarms": ev(True, 0.6),
            "avail_again": ev(False, 0.4), "attempts": ev(False, 0.7),
        },
    )  # fmt: skip
    tool = Tool()
    explorer, tree = await explore(pool, planner, tool)
    assert tool.ran.count(shared) == 1  # run once for the analysis
    assert sorted(tool.ran) == sorted([shared, "SELECT 'alarms'", "SELECT 'attempts'"])
    assert explorer.tool_runs == {"sql": 3} and explorer.reused_runs == 1
    results = results_of(tree)
    # each hypothesis's node got the shared result, interpreted for that hypothesis
    assert results["avail"] is not None and results["avail"].confirmed is True
    assert results["avail_again"] is not None and results["avail_again"].confirmed is False
    assert results["avail"].data["seen"] == results["avail_again"].data["seen"]
    assert all(
        n.status == "completed" for n in tree.nodes.values() if n.node_type == "verification"
    )


async def test_a_failed_shared_run_is_not_reused_by_a_later_check(pool: asyncpg.Pool[Any]) -> None:
    class FlakyTool(Tool):
        async def run(self, request: ToolRequest) -> ToolResult:
            await super().run(request)
            if len(self.ran) == 1:
                return ToolResult.failure(self.name, "timeout", "timed out")
            return ToolResult(tool=self.name, ok=True, rows=[{"v": 1}], row_count=1)

    shared = "SELECT 1"
    planner = Planner(
        [hyp("outage"), hyp("demand")],
        {"outage": [check("first", shared)], "demand": [check("second", shared)]},
        {"first": ev(True, 0.8), "second": ev(True, 0.8)},
    )
    tool = FlakyTool()
    # one tool slot: the second check asks after the first run has failed
    _, tree = await explore(pool, planner, tool, tool_concurrency=1)
    assert tool.ran == [shared, shared]
    statuses = {
        n.context["key"]: n.status for n in tree.nodes.values() if n.node_type == "verification"
    }
    assert statuses == {"first": "rejected", "second": "completed"}


async def test_one_model_call_interprets_all_checks_of_a_hypothesis(
    pool: asyncpg.Pool[Any],
) -> None:
    planner = BatchPlanner(
        [hyp("outage"), hyp("demand")],
        {"outage": [check("o1"), check("o2"), check("o3")], "demand": [check("d1"), check("d2")]},
        {"o1": ev(True, 0.9), "o2": ev(None, 0.3), "o3": ev(False, 0.2),
         "d1": ev(False, 0.8), "d2": ev(False, 0.6)},
    )  # fmt: skip
    explorer, tree = await explore(pool, planner, Tool())
    assert sorted(planner.batches) == [("demand", ["d1", "d2"]), ("outage", ["o1", "o2", "o3"])]
    assert not [c for c in planner.calls if c.startswith("interpret:")]
    results = results_of(tree)
    assert {k: (e.confirmed, e.confidence) for k, e in results.items() if e} == {
        "o1": (True, 0.9), "o2": (None, 0.3), "o3": (False, 0.2),
        "d1": (False, 0.8), "d2": (False, 0.6),
    }  # fmt: skip
    # model calls: hypotheses, 2 x checks, 2 x interpretation, synthesis — each one slot
    assert explorer.model_slots.granted == 6 and explorer.tool_slots.granted == 5


async def test_a_check_the_shared_reply_leaves_out_is_interpreted_alone(
    pool: asyncpg.Pool[Any],
) -> None:
    planner = BatchPlanner(
        [hyp("outage")],
        {"outage": [check("o1"), check("o2")]},
        {"o1": ev(True, 0.9), "o2": ev(False, 0.4)},
        skip=["o2"],
    )
    explorer, tree = await explore(pool, planner, Tool())
    assert "interpret_all:outage" in planner.calls and "interpret:outage.o2" in planner.calls
    assert "interpret:outage.o1" not in planner.calls
    results = results_of(tree)
    assert results["o2"] is not None and results["o2"].confirmed is False
    assert explorer.model_slots.granted == 5  # the fallback call holds a model slot too


async def test_an_unusable_shared_reply_falls_back_to_one_call_per_check(
    pool: asyncpg.Pool[Any],
) -> None:
    class GarbledPlanner(BatchPlanner):
        async def interpret_checks(
            self,
            ctx: PlanningContext,
            hypothesis: HypothesisProposal,
            results: Sequence[tuple[CheckProposal, ToolResult]],
        ) -> list[Evidence | None]:
            self.calls.append(f"interpret_all:{hypothesis.key}")
            raise LLMResponseError("not JSON after one repair")

    planner = GarbledPlanner(
        [hyp("outage")],
        {"outage": [check("o1"), check("o2")]},
        {"o1": ev(True, 0.9), "o2": ev(False, 0.4)},
    )
    _, tree = await explore(pool, planner, Tool())
    assert sorted(c for c in planner.calls if c.startswith("interpret")) == [
        "interpret:outage.o1", "interpret:outage.o2", "interpret_all:outage",
    ]  # fmt: skip
    results = results_of(tree)
    assert results["o1"] is not None and results["o1"].confirmed is True
    assert results["o2"] is not None and results["o2"].confirmed is False


async def test_a_tool_run_holds_no_model_slot(pool: asyncpg.Pool[Any]) -> None:
    # One model slot. The outage checks' tool runs wait until the demand checks have
    # been proposed, which needs the model slot: if a tool run held it, this would hang.
    planner = BatchPlanner(
        [hyp("outage", prior=0.9), hyp("demand", prior=0.2)],
        {"outage": [check("o1"), check("o2")], "demand": [check("d1")]},
        {"o1": ev(True, 0.9), "o2": ev(True, 0.5), "d1": ev(False, 0.6)},
    )
    tool = Tool()
    tool.wait_for = planner.proposed["demand"]
    explorer, tree = await explore(pool, planner, tool, model_concurrency=1, tool_concurrency=4)
    assert planner.calls.index("checks:demand") < planner.calls.index("interpret_all:outage")
    assert explorer.model_slots.peak == 1 and explorer.tool_slots.peak >= 2
    assert explorer.tool_slots.granted == 3 and explorer.model_slots.granted == 6
    assert all(e is not None for e in results_of(tree).values())


async def test_the_longest_remaining_chain_starts_first(pool: asyncpg.Pool[Any]) -> None:
    # Best-first alone would interpret the likely outage's results before proposing checks
    # for the unlikely neighbour hypothesis; its chain (checks -> interpretation ->
    # synthesis) is longer, so it goes first and the analysis ends sooner.
    planner = BatchPlanner(
        [hyp("outage", prior=0.9), hyp("demand", prior=0.8), hyp("neighbour", prior=0.1)],
        {"outage": [check("o1")], "demand": [check("d1")], "neighbour": [check("n1")]},
        {"o1": ev(True, 0.9), "d1": ev(False, 0.6), "n1": ev(False, 0.6)},
        plan_delay=0.05,  # the outage's tool run is done while the demand's checks are planned
    )
    await explore(pool, planner, Tool(), model_concurrency=1)
    assert planner.calls == [
        "hypotheses",
        "checks:outage",
        "checks:demand",
        "checks:neighbour",
        "interpret_all:outage",
        "interpret_all:demand",
        "interpret_all:neighbour",
        "synthesize",
    ]


def test_chain_priority_puts_longer_chains_first_and_keeps_the_order_within() -> None:
    depth_limit = 3
    hypothesis = Node(
        id="h1", tree_id="t", node_type="hypothesis", title="t", depth=1, prior=0.1, promise=0.1
    )
    likely = Node(
        id="h2", tree_id="t", node_type="hypothesis", title="u", depth=1, prior=0.9, promise=0.9
    )
    sub = Node(
        id="h2.h1", tree_id="t", node_type="hypothesis", title="s", depth=2, prior=0.9, promise=0.9
    )

    def work(step: Any, node: Node) -> tuple[float, ...]:
        rounds = remaining_rounds(step, node.depth, depth_limit)
        return chain_priority(rounds, priority(node, "best_first"))

    # a hypothesis that may still be branched has sub-hypotheses' rounds after it
    assert remaining_rounds("checks", 1, depth_limit) == 6
    assert remaining_rounds("interpret", 1, depth_limit) == 5
    assert remaining_rounds("checks", 2, depth_limit) == 3
    assert remaining_rounds("interpret", 2, depth_limit) == 2
    assert work("checks", hypothesis) < work("interpret", likely)  # longer chain first
    assert work("checks", likely) < work("checks", hypothesis)  # same chain: best first
    assert work("interpret", likely) < work("checks", sub)


async def test_scheduler_counts_what_it_hands_out() -> None:
    scheduler = PriorityScheduler(2)

    async def hold() -> None:
        async with scheduler.slot((0.0,)):
            assert scheduler.busy <= 2
            await asyncio.sleep(0.01)

    await asyncio.gather(*(hold() for _ in range(5)))
    assert scheduler.granted == 5 and scheduler.peak == 2 and scheduler.busy == 0
