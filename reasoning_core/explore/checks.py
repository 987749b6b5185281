"""Running the checks of one analysis: tool runs, interpretation, results, concurrently.

Tool runs and model calls have separate limits: a tool run holds a slot of the
tool scheduler (cheap, local work), an interpretation by a model holds a slot
of the model scheduler (the planner gate's), so neither waits behind the other.

- A check's tool run waits for a tool slot in the search order; it is pruned
  instead if the analysis stopped, its hypothesis is strongly contradicted or
  its promise fell below the pruning threshold. A failed run (``ok=False``)
  rejects the check with the tool's reason.
- Checks shared between hypotheses (the same tool and the same request) run
  once per analysis: later ones reuse the result (`SharedRuns`), and each check
  node still gets its own evidence. A failed run is not reused by later checks.
- A planner that interprets with a model (`BatchInterpreter`: the LLM planner)
  is asked once per hypothesis, for all of its checks' results together, in one
  model slot; a check the reply leaves without a verdict, or all of them when the
  reply is unusable, is interpreted alone, as before.
- Any other planner (the runbook planner: a verdict rule decides) interprets
  each result as soon as its tool returns, with no model slot: the next check
  to start sees this result (for pruning and early stop).

Recorded evidence aggregates upward and may stop the analysis early.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from reasoning_core.errors import ReasoningError, StoreError, ToolError
from reasoning_core.events import NodeCompletedEvent
from reasoning_core.explore.budgets import BudgetExhaustedError
from reasoning_core.explore.emitter import Emit
from reasoning_core.explore.growth import Growth
from reasoning_core.explore.planner_gate import PlannerGate
from reasoning_core.explore.policy import (
    ExplorationPolicy,
    chain_priority,
    check_promise,
    is_contradicted,
    priority,
    remaining_rounds,
)
from reasoning_core.explore.progress import line
from reasoning_core.explore.scheduler import PriorityScheduler
from reasoning_core.explore.state import check_of, checks_under
from reasoning_core.explore.stopping import StopSignal
from reasoning_core.models import Evidence, Node
from reasoning_core.ports import BatchInterpreter
from reasoning_core.ports.planning import CheckProposal, HypothesisProposal, PlanningContext
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


def run_key(check: CheckProposal) -> str:
    """What makes two checks the same run: the tool and its whole request."""
    return f"{check.tool}:{check.request.model_dump_json()}"


class SharedRuns:
    """Tool runs of one analysis by `run_key`: a check asked for twice runs once.

    A run is its own task (so a check that stops waiting does not end it for the
    others); `cancel` ends the ones still running when the analysis ends.
    """

    def __init__(self) -> None:
        self._runs: dict[str, asyncio.Task[ToolResult]] = {}
        #: Checks that reused another check's run.
        self.reused = 0

    async def result(self, key: str, run: Coroutine[Any, Any, ToolResult]) -> ToolResult:
        """The result of the run under `key`: `run` is started only if there is none."""
        task = self._runs.get(key)
        if task is None or _failed(task):
            task = asyncio.ensure_future(run)
            self._runs[key] = task
        else:
            run.close()  # never started: the check reuses the run already there
            self.reused += 1
        return await asyncio.shield(task)

    async def cancel(self) -> None:
        """End the runs still going (the analysis is over)."""
        running = [t for t in self._runs.values() if not t.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


def _failed(task: asyncio.Task[ToolResult]) -> bool:
    """A finished run whose result may not be reused (it failed or never finished)."""
    if not task.done():
        return False
    return task.cancelled() or task.exception() is not None or not task.result().ok


class CheckRunner:
    """Runs the checks of one analysis on its tree: tools in tool slots, models in model slots."""

    def __init__(
        self,
        *,
        manager: TreeManager,
        growth: Growth,
        gate: PlannerGate,
        tool_scheduler: PriorityScheduler,
        stop: StopSignal,
        emit: Emit,
        tools: Mapping[str, Tool],
        policy: ExplorationPolicy,
        depth_limit: int,
    ) -> None:
        self._manager = manager
        self._depth_limit = depth_limit
        self._growth = growth
        self._gate = gate
        self._tool_slots = tool_scheduler
        self._stop = stop
        self._emit = emit
        self._tools = dict(tools)
        self._policy = policy
        self._shared = SharedRuns()
        #: Tool runs started, by tool name (tests and benchmarks read it).
        self.runs: dict[str, int] = {}

    @property
    def tool_names(self) -> list[str]:
        return sorted(self._tools)

    @property
    def reused_runs(self) -> int:
        """Checks that reused the run of an identical check instead of running again."""
        return self._shared.reused

    @property
    def interprets_together(self) -> bool:
        """True when the planner's model interprets all of a hypothesis's results at once."""
        return isinstance(self._gate.planner, BatchInterpreter)

    async def close(self) -> None:
        """End shared tool runs still going (the analysis is over)."""
        await self._shared.cancel()

    def start_all(
        self,
        group: asyncio.TaskGroup,
        ctx: PlanningContext,
        hypothesis_id: str,
        proposal: HypothesisProposal,
    ) -> None:
        """Start every open check of a hypothesis as tasks of `group`."""
        tree = self._manager.tree
        ids = [n.id for n in checks_under(tree, hypothesis_id) if n.status in OPEN]
        self.start_many(group, ctx, ids, proposal)

    def start(
        self,
        group: asyncio.TaskGroup,
        ctx: PlanningContext,
        check_id: str,
        proposal: HypothesisProposal,
    ) -> None:
        """Start one check as a task of `group`."""
        self.start_many(group, ctx, [check_id], proposal)

    def start_many(
        self,
        group: asyncio.TaskGroup,
        ctx: PlanningContext,
        check_ids: Sequence[str],
        proposal: HypothesisProposal,
    ) -> None:
        """Start checks of one hypothesis: one task for a model's interpretation of them
        all, else one task per check."""
        if not check_ids:
            return
        if self.interprets_together:
            group.create_task(self.run_together(ctx, list(check_ids), proposal))
            return
        for check_id in check_ids:
            group.create_task(self.run_one(ctx, check_id, proposal))

    # --- a planner that interprets without a model: check by check ---------------------

    async def run_one(
        self, ctx: PlanningContext, check_id: str, proposal: HypothesisProposal
    ) -> None:
        """Run one check, interpret its result (no model slot) and record it.

        All three hold the check's tool slot, so the next check to start sees this
        result (for pruning and early stop), as with a single slot per check before.
        """
        check = await self._readable(check_id)
        if check is None:
            return
        async with self._tool_slots.slot(self._tool_work(check_id)):
            result = await self._run_tool(check_id, check)
            if result is None:
                return
            try:
                self._gate.take_call()
                evidence = await self._gate.planner.interpret(ctx, proposal, check, result)
            except StoreError:
                raise
            except ReasoningError as e:
                await self._not_interpreted(check_id, e)
                return
            await self._record(check_id, evidence, result)

    # --- a planner that interprets with a model: one call per hypothesis ---------------

    async def run_together(
        self, ctx: PlanningContext, check_ids: list[str], proposal: HypothesisProposal
    ) -> None:
        """Run the checks' tools concurrently, then one model call for all their results."""
        readable = [(i, c) for i in check_ids if (c := await self._readable(i)) is not None]
        results = await asyncio.gather(*(self._run_in_slot(i, c) for i, c in readable))
        done = [(i, c, r) for (i, c), r in zip(readable, results, strict=True) if r is not None]
        if not done:
            return
        tree = self._manager.tree
        hypothesis = tree.nodes[tree.nodes[done[0][0]].parent_id or ""]
        work = chain_priority(
            remaining_rounds("interpret", hypothesis.depth, self._depth_limit),
            priority(hypothesis, self._policy.order),
        )
        verdicts: list[Evidence | None] = [None] * len(done)
        try:
            async with self._gate.slot(work) as planner:
                if isinstance(planner, BatchInterpreter):
                    pairs = [(c, r) for _, c, r in done]
                    verdicts = await planner.interpret_checks(ctx, proposal, pairs)
        except StoreError:
            raise
        except BudgetExhaustedError as e:
            for check_id, _, _ in done:
                await self._not_interpreted(check_id, e)
            return
        except ReasoningError as e:
            log.warning("could not interpret the checks of %s together: %s", hypothesis.id, e)
        if len(verdicts) != len(done):
            verdicts = [None] * len(done)
        settled = await asyncio.gather(
            *(
                self._alone(ctx, proposal, work, item, evidence)
                for item, evidence in zip(done, verdicts, strict=True)
            )
        )
        await self._record_all(
            [(i, e, r) for (i, _, r), e in zip(done, settled, strict=True) if e is not None]
        )

    async def _alone(
        self,
        ctx: PlanningContext,
        proposal: HypothesisProposal,
        work: tuple[float, ...],
        item: tuple[str, CheckProposal, ToolResult],
        evidence: Evidence | None,
    ) -> Evidence | None:
        """The check's verdict from the shared call, else from a call of its own (None:
        not interpreted, and the check rejected with the reason)."""
        if evidence is not None:
            return evidence
        check_id, check, result = item
        try:
            return await self._gate.ask(work, lambda p: p.interpret(ctx, proposal, check, result))
        except StoreError:
            raise
        except ReasoningError as e:
            await self._not_interpreted(check_id, e)
            return None

    # --- shared steps -----------------------------------------------------------------

    async def _readable(self, check_id: str) -> CheckProposal | None:
        """The check's request, or None (and the check rejected) when it cannot run."""
        check = check_of(self._manager.tree.nodes[check_id])
        if check is None or check.tool not in self._tools:
            why = "its request could not be read back" if check is None else "unknown tool"
            await self._growth.close(check_id, f"cannot run this check: {why}", prune=False)
            return None
        return check

    def _tool_work(self, check_id: str) -> tuple[float, ...]:
        """A tool run's place in the queue: its chain (interpretation next), then the order."""
        node = self._manager.tree.nodes[check_id]
        rounds = remaining_rounds("interpret", max(node.depth - 1, 0), self._depth_limit)
        return chain_priority(rounds, priority(node, self._policy.order))

    async def _run_in_slot(self, check_id: str, check: CheckProposal) -> ToolResult | None:
        async with self._tool_slots.slot(self._tool_work(check_id)):
            return await self._run_tool(check_id, check)

    async def _run_tool(self, check_id: str, check: CheckProposal) -> ToolResult | None:
        """The tool's result, or None when the check was pruned or its run failed.

        Called holding a tool slot: whether to prune is decided once the slot is ours,
        so results recorded while the check waited count.
        """
        reason = self._skip_reason(self._manager.tree.nodes[check_id], check)
        if reason is not None:
            await self._growth.close(check_id, reason, prune=True)
            return None
        # No in_progress write: a restart runs pending and in-progress checks alike.
        result = await self._shared.result(run_key(check), self._run(check))
        if not result.ok:
            reason = f"{result.tool} {result.error_kind or 'failed'}: {result.error}"
            await self._growth.close(check_id, reason, prune=False)
            return None
        return result

    async def _run(self, check: CheckProposal) -> ToolResult:
        self.runs[check.tool] = self.runs.get(check.tool, 0) + 1
        try:
            return await self._tools[check.tool].run(check.request)
        except ToolError as e:
            return ToolResult.failure(check.tool, "failed", str(e))

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

    async def _not_interpreted(self, check_id: str, error: ReasoningError) -> None:
        log.warning("could not interpret %s: %s", check_id, error)
        prune = isinstance(error, BudgetExhaustedError)
        reason = str(error) if prune else f"could not interpret the result: {error}"
        await self._growth.close(check_id, reason, prune=prune)

    async def _record(self, check_id: str, evidence: Evidence, result: ToolResult) -> None:
        await self._record_all([(check_id, evidence, result)])

    async def _record_all(self, found: Sequence[tuple[str, Evidence, ToolResult]]) -> None:
        """Record the checks' evidence in one change of the tree, then say so."""
        if not found:
            return
        recorded = [(i, with_rows_seen(e, r)) for i, e, r in found]
        updated = await self._manager.set_node_results(recorded)
        for node, (_, evidence) in zip(updated, recorded, strict=True):
            verdict = {True: "confirmed", False: "refuted", None: "inconclusive"}[
                evidence.confirmed
            ]
            self._emit(
                line(
                    "completed",
                    id=node.id,
                    verdict=evidence.confirmed,
                    p=evidence.confidence,
                    text=evidence.text[:120],
                ),
                NodeCompletedEvent(node_id=node.id, verdict=verdict, confidence=node.confidence),
            )
        self._stop.after_result(self._manager.tree.synthesis)
