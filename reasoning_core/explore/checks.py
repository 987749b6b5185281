"""Running the checks of one hypothesis: tool run, interpretation, result, concurrently.

Each open check runs as its own task: it waits for a scheduler slot in the
search order, is pruned instead if the analysis stopped, its hypothesis is
strongly contradicted or its promise fell below the pruning threshold, then
runs its tool. A failed run (``ok=False``) rejects the check with the tool's
reason; otherwise the planner interprets the result and the evidence is
recorded, which aggregates upward and may stop the analysis early. Run,
interpretation and record share one slot: a check is one unit of work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from reasoning_core.errors import ReasoningError, StoreError, ToolError
from reasoning_core.explore.budgets import BudgetExhaustedError
from reasoning_core.explore.emitter import Emit
from reasoning_core.explore.growth import Growth
from reasoning_core.explore.planner_gate import PlannerGate
from reasoning_core.explore.policy import (
    ExplorationPolicy,
    check_promise,
    is_contradicted,
    priority,
)
from reasoning_core.explore.progress import line
from reasoning_core.explore.scheduler import PriorityScheduler
from reasoning_core.explore.state import check_of, checks_under
from reasoning_core.explore.stopping import StopSignal
from reasoning_core.models import Evidence, Node
from reasoning_core.planners.contract import CheckProposal, HypothesisProposal, PlanningContext
from reasoning_core.tools.base import Tool, ToolResult, sample_rows
from reasoning_core.tree.aggregation import has_evidence
from reasoning_core.tree.manager import TreeManager
from reasoning_core.tree.walk import OPEN

log = logging.getLogger(__name__)


def with_rows_seen(evidence: Evidence, result: ToolResult) -> Evidence:
    """The evidence with the first rows its tool returned (``data["seen"]``), so a reader
    of the analysis can see the data behind the verdict."""
    seen = sample_rows(result).model_dump(mode="json")
    return evidence.model_copy(update={"data": {**evidence.data, "seen": seen}})


class CheckRunner:
    """Runs the checks of one analysis on its tree, in its scheduler's slots."""

    def __init__(
        self,
        *,
        manager: TreeManager,
        growth: Growth,
        gate: PlannerGate,
        scheduler: PriorityScheduler,
        stop: StopSignal,
        emit: Emit,
        tools: Mapping[str, Tool],
        policy: ExplorationPolicy,
    ) -> None:
        self._manager = manager
        self._growth = growth
        self._gate = gate
        self._scheduler = scheduler
        self._stop = stop
        self._emit = emit
        self._tools = dict(tools)
        self._policy = policy
        #: Tool runs started, by tool name (tests and benchmarks read it).
        self.runs: dict[str, int] = {}

    @property
    def tool_names(self) -> list[str]:
        return sorted(self._tools)

    def start_all(
        self,
        group: asyncio.TaskGroup,
        ctx: PlanningContext,
        hypothesis_id: str,
        proposal: HypothesisProposal,
    ) -> None:
        """Start every open check of a hypothesis as a task of `group`."""
        tree = self._manager.tree
        for node in checks_under(tree, hypothesis_id):
            if node.status in OPEN:
                self.start(group, ctx, node.id, proposal)

    def start(
        self,
        group: asyncio.TaskGroup,
        ctx: PlanningContext,
        check_id: str,
        proposal: HypothesisProposal,
    ) -> None:
        """Start one check as a task of `group`."""
        group.create_task(self.run_one(ctx, check_id, proposal))

    async def run_one(
        self, ctx: PlanningContext, check_id: str, proposal: HypothesisProposal
    ) -> None:
        """Run one check and its interpretation in one slot, then record the evidence."""
        check = check_of(self._manager.tree.nodes[check_id])
        if check is None or check.tool not in self._tools:
            why = "its request could not be read back" if check is None else "unknown tool"
            await self._growth.close(check_id, f"cannot run this check: {why}", prune=False)
            return
        # One slot for run, interpretation and record: the next check to start sees this
        # result (for pruning and early stop).
        work = priority(self._manager.tree.nodes[check_id], self._policy.order)
        async with self._scheduler.slot(work):
            result = await self._run_tool(check_id, check)
            if result is None:
                return
            evidence = await self._interpret(ctx, check_id, proposal, check, result)
            if evidence is None:
                return
            evidence = with_rows_seen(evidence, result)
            updated = await self._manager.set_node_result(check_id, evidence)
        verdict = {True: "confirmed", False: "refuted", None: "inconclusive"}[evidence.confirmed]
        self._emit(
            "node_completed",
            line("completed", id=updated.id, verdict=evidence.confirmed, p=evidence.confidence,
                 text=evidence.text[:120]),
            node_id=updated.id, verdict=verdict, confidence=updated.confidence,
        )  # fmt: skip
        self._stop.after_result(self._manager.tree.synthesis)

    async def _run_tool(self, check_id: str, check: CheckProposal) -> ToolResult | None:
        """The tool's result, or None when the check was pruned or its run failed."""
        reason = self._skip_reason(self._manager.tree.nodes[check_id], check)
        if reason is not None:
            await self._growth.close(check_id, reason, prune=True)
            return None
        # No in_progress write: a restart runs pending and in-progress checks alike.
        self.runs[check.tool] = self.runs.get(check.tool, 0) + 1
        try:
            result = await self._tools[check.tool].run(check.request)
        except ToolError as e:
            result = ToolResult.failure(check.tool, "failed", str(e))
        if not result.ok:
            reason = f"{result.tool} {result.error_kind or 'failed'}: {result.error}"
            await self._growth.close(check_id, reason, prune=False)
            return None
        return result

    def _skip_reason(self, node: Node, check: CheckProposal) -> str | None:
        if (stop := self._stop.reason) is not None:
            return stop
        tree = self._manager.tree
        hypothesis = tree.nodes[node.parent_id or ""]
        p = hypothesis.confidence if hypothesis.confidence is not None else hypothesis.prior
        if has_evidence(tree, hypothesis) and is_contradicted(p, self._policy):
            return f"{hypothesis.id} is strongly contradicted ({p:.2f})"
        promise = check_promise(p, check.gain, check.cost)
        if promise < self._policy.pruning_threshold:
            return f"promise {promise:.3f} below the pruning threshold"
        return None

    async def _interpret(
        self,
        ctx: PlanningContext,
        check_id: str,
        proposal: HypothesisProposal,
        check: CheckProposal,
        result: ToolResult,
    ) -> Evidence | None:
        try:
            self._gate.take_call()
            return await self._gate.planner.interpret(ctx, proposal, check, result)
        except StoreError:
            raise
        except ReasoningError as e:
            log.warning("could not interpret %s: %s", check_id, e)
            prune = isinstance(e, BudgetExhaustedError)
            reason = str(e) if prune else f"could not interpret the result: {e}"
            await self._growth.close(check_id, reason, prune=prune)
            return None
