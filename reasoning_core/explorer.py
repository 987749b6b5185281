"""The explorer: grows a hypothesis tree by asking a `Planner` and running checks.

One `Explorer` runs one analysis on a `TreeManager` whose tree already exists
(created, or loaded to continue after a restart):

1. the root gets competing hypotheses from ``propose_hypotheses`` (unless it
   has them already); a `Plan.conclusion` becomes the "none" hypothesis;
2. each hypothesis gets checks from ``propose_checks`` (verification nodes);
3. each check runs through its tool; the result is interpreted by the planner
   and recorded with ``set_node_result`` (aggregation follows);
4. an undecided hypothesis is branched into sub-hypotheses (explorer_branching);
5. with a `Reflector`, reflection rounds follow each wave of work: checks
   retried another way, or the plan revised (explorer_reflection);
6. the synthesis is merged from the tree and the planner's wording
   (explorer_merge) and kept in `synthesis`.

Independent work runs concurrently: every planner call, and every check (tool
run, interpretation and record together), holds one slot of a
`PriorityScheduler` with `concurrency` slots; waiting work starts in the
policy's search order (explorer_policy), and each hypothesis and check starts
as soon as it is in the tree, so wall time follows the tree's critical path
rather than its node count. Completed checks are never run again: a loaded
tree resumes with its open work only.

Bad proposals never stop the analysis: hypotheses that are duplicates, beyond
`max_branches` or without a title are dropped (logged, with an event); checks
for an unknown tool, failed tool runs and uninterpretable results become
rejected nodes with the reason, and the report lists them as not checked.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from reasoning_core.budgets import (
    DEADLINE_REASON,
    BudgetExhaustedError,
    Budgets,
    BudgetTracker,
)
from reasoning_core.errors import LLMError, ReasoningError, StoreError
from reasoning_core.events import Event, EventKind
from reasoning_core.explorer_branching import propose_sub_hypotheses
from reasoning_core.explorer_checks import CheckRunner
from reasoning_core.explorer_growth import Growth
from reasoning_core.explorer_merge import conclude
from reasoning_core.explorer_policy import ROOT_PRIORITY, ExplorationPolicy, Priority, priority
from reasoning_core.explorer_reflection import reflect
from reasoning_core.explorer_scheduler import PriorityScheduler
from reasoning_core.explorer_state import (
    checks_under,
    hypotheses_under,
    planner_of,
    proposal_of,
    with_plan_parameters,
)
from reasoning_core.models import Synthesis
from reasoning_core.planning import HypothesisProposal, PlanningContext
from reasoning_core.ports import Planner
from reasoning_core.reflection import Reflector
from reasoning_core.reflection_decision import EARLY_STOP
from reasoning_core.tools.base import Tool
from reasoning_core.tree.edits import ROOT_ID
from reasoning_core.tree.manager import TreeManager

log = logging.getLogger(__name__)

T = TypeVar("T")


class Explorer:
    """Grows and concludes one tree; single use: create one per analysis."""

    def __init__(
        self,
        *,
        manager: TreeManager,
        planner: Planner,
        tools: Mapping[str, Tool],
        budgets: Budgets | None = None,
        policy: ExplorationPolicy | None = None,
        concurrency: int = 4,
        clock: Callable[[], float] = time.monotonic,
        fallback_planner: Planner | None = None,
        reflector: Reflector | None = None,
    ) -> None:
        self._manager = manager
        self._reflector = reflector
        self._planner = planner
        self._fallback = fallback_planner
        self._budgets = budgets or Budgets()
        self._policy = policy or ExplorationPolicy()
        self._tracker = BudgetTracker(self._budgets, clock)
        self._scheduler = PriorityScheduler(concurrency)
        self._sink: Callable[[Event], None] = lambda event: None
        self._stop_reason: str | None = None
        self._growth = Growth(
            manager=manager, budgets=self._budgets, tracker=self._tracker, emit=self.emit
        )
        self._checks = CheckRunner(explorer=self, tools=tools, policy=self._policy)
        #: The merged synthesis, set when `explore` has finished.
        self.synthesis: Synthesis | None = None

    # --- shared with the helpers -------------------------------------------------------

    @property
    def manager(self) -> TreeManager:
        return self._manager

    @property
    def growth(self) -> Growth:
        return self._growth

    @property
    def budgets(self) -> Budgets:
        return self._budgets

    @property
    def policy(self) -> ExplorationPolicy:
        return self._policy

    @property
    def tool_runs(self) -> dict[str, int]:
        """Tool runs started in this analysis, by tool name."""
        return dict(self._checks.runs)

    @property
    def checks(self) -> CheckRunner:
        return self._checks

    @property
    def reflector(self) -> Reflector | None:
        """Reflection of this analysis (None: the plan runs to the end as it is)."""
        return self._reflector

    @property
    def scheduler(self) -> PriorityScheduler:
        return self._scheduler

    @property
    def stop_reason(self) -> str | None:
        """Why no new work may start (early stop or deadline), or None."""
        if self._stop_reason is None and self._tracker.deadline_passed():
            self._stop_reason = f"{DEADLINE_REASON} after {self._budgets.deadline_sec:g} s"
        return self._stop_reason

    @property
    def planner(self) -> Planner:
        """The planner growing the tree (the fallback once the primary has failed)."""
        return self._planner

    @property
    def planner_name(self) -> str:
        """The planner that is (or was) growing the tree."""
        return self._planner.name

    @property
    def peak_concurrency(self) -> int:
        """Most slots ever held at once (planner calls and tool runs)."""
        return self._scheduler.peak

    def emit(self, kind: EventKind, what: str, **data: Any) -> None:
        """Send one event: progress line first, then what happened."""
        status = self._manager.get_status()
        message = f"Deep analysis · {status['progress']} · {what}"
        self._sink(
            Event(
                kind=kind,
                message=message,
                data={**data, "tree_id": status["tree_id"], "progress": status["progress"]},
            )
        )

    def priority_of(self, node_id: str, *, promise: float | None = None) -> Priority:
        return priority(self._manager.tree.nodes[node_id], self._policy.order, promise=promise)

    def may_ask_llm(self) -> bool:
        """Count one LLM call outside the planner (the reflection critique) if a budget allows."""
        return self._tracker.take_planner_call() is None

    def take_planner_call(self) -> None:
        """Count one planner call; `BudgetExhaustedError` when a budget refuses it."""
        refusal = self._tracker.take_planner_call()
        if refusal is not None:
            raise BudgetExhaustedError(refusal)

    @asynccontextmanager
    async def planner_slot(self, work: Priority) -> AsyncIterator[Planner]:
        """The planner, within the budget and while holding a scheduler slot."""
        self.take_planner_call()
        async with self._scheduler.slot(work):
            yield self._planner

    async def ask(self, work: Priority, call: Callable[[Planner], Awaitable[T]]) -> T:
        """One planner call under the budget and a scheduler slot.

        Raises `BudgetExhaustedError` when a budget refuses it, and whatever the
        planner raises.
        """
        async with self.planner_slot(work) as planner:
            return await call(planner)

    def after_result(self) -> None:
        """Stop early once the root is confident enough."""
        synthesis = self._manager.tree.synthesis
        if synthesis is None or self._stop_reason is not None:
            return
        if synthesis.confidence >= self._policy.stop_confidence:
            self._stop_reason = f"{EARLY_STOP}: the root is confident ({synthesis.confidence:.2f})"
            self.emit("reasoning", self._stop_reason, stopped=True)

    def lift_early_stop(self) -> None:
        """Let new work start again after an early stop (reflection decided to look further)."""
        if self._stop_reason is not None and self._stop_reason.startswith(EARLY_STOP):
            self._stop_reason = None

    # --- the run ---------------------------------------------------------------------

    async def explore(self, ctx: PlanningContext) -> AsyncIterator[Event]:
        """Grow the tree and conclude; yields an event for every step."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._sink = queue.put_nowait
        task = asyncio.create_task(self._run(ctx, queue))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _run(self, ctx: PlanningContext, queue: asyncio.Queue[Event | None]) -> None:
        try:
            try:
                async with asyncio.timeout(self._budgets.deadline_sec):
                    await self._grow(ctx)
                    if self._reflector is not None:
                        planned = with_plan_parameters(ctx, self._manager.tree)
                        await reflect(self, self._reflector, planned)
            except TimeoutError:
                self._stop_reason = f"{DEADLINE_REASON} after {self._budgets.deadline_sec:g} s"
                self.emit("reasoning", self._stop_reason, stopped=True)
            except BaseExceptionGroup as group:
                raise _first_leaf(group) from group
            await self._growth.close_open_work(self.stop_reason or "not run")
            self.synthesis = await self._conclude(ctx)
        finally:
            queue.put_nowait(None)

    async def _grow(self, ctx: PlanningContext) -> None:
        tree = self._manager.tree
        self._resume_planner(planner_of(tree))
        async with asyncio.TaskGroup() as group:
            if not hypotheses_under(tree, ROOT_ID, active_only=False):
                await self._plan(ctx, group)
                return
            ctx = with_plan_parameters(ctx, tree)
            for node in hypotheses_under(tree, ROOT_ID):
                group.create_task(self._explore_hypothesis(ctx, node.id))

    async def explore_hypothesis(self, ctx: PlanningContext, node_id: str) -> None:
        """Plan and run the checks of one hypothesis, then branch it."""
        await self._explore_hypothesis(ctx, node_id)

    def _resume_planner(self, name: str | None) -> None:
        fallback = self._fallback
        if name and name != self._planner.name and fallback is not None and fallback.name == name:
            self._planner = fallback

    async def _plan(self, ctx: PlanningContext, group: asyncio.TaskGroup) -> None:
        """Propose hypotheses; each one is explored as soon as it is in the tree."""
        self.emit("reasoning", "Proposing hypotheses…")
        try:
            plan = await self.ask(ROOT_PRIORITY, lambda p: p.propose_hypotheses(ctx))
        except LLMError as e:
            if self._fallback is None or self._planner is self._fallback:
                raise
            log.warning("%s planner failed (%s); falling back", self._planner.name, e)
            self.emit("reasoning", f"The {self._planner.name} planner failed ({e}); "
                      f"using the {self._fallback.name} planner")  # fmt: skip
            self._planner = self._fallback
            plan = await self.ask(ROOT_PRIORITY, lambda p: p.propose_hypotheses(ctx))
        if plan.conclusion is not None:
            await self._growth.record_conclusion(plan, self._planner.name)
            return
        planned = ctx.model_copy(update={"parameters": {**ctx.parameters, **plan.parameters}})

        def explore(node_id: str) -> None:
            group.create_task(self._explore_hypothesis(planned, node_id))

        await self._growth.add_hypotheses(
            ROOT_ID, plan.hypotheses, ctx=ctx, planner=self._planner.name,
            parameters=plan.parameters, on_added=explore,
        )  # fmt: skip

    async def _explore_hypothesis(self, ctx: PlanningContext, node_id: str) -> None:
        tree = self._manager.tree
        proposal = proposal_of(tree.nodes[node_id])
        fresh = not checks_under(tree, node_id) and not hypotheses_under(
            tree, node_id, active_only=False
        )
        async with asyncio.TaskGroup() as group:
            if not fresh:
                self._checks.start_all(group, ctx, node_id, proposal)
            elif not await self._plan_checks(ctx, node_id, proposal, group):
                return
        await self._branch(ctx, node_id, proposal)

    async def _plan_checks(
        self,
        ctx: PlanningContext,
        node_id: str,
        proposal: HypothesisProposal,
        group: asyncio.TaskGroup,
    ) -> bool:
        """Ask for checks and start them; the slot is held until they wait for slots too.

        Holding it that long lets the search order choose between this hypothesis's
        new checks and work that was already waiting.
        """
        if (reason := self.stop_reason) is not None:
            await self._growth.close(node_id, reason, prune=True)
            return False
        try:
            async with self.planner_slot(self.priority_of(node_id)) as planner:
                checks = await planner.propose_checks(ctx, proposal)

                def start(check_id: str) -> None:  # each check starts as soon as it is added
                    self._checks.start(group, ctx, check_id, proposal)

                tools = self._checks.tool_names
                if not await self._growth.add_checks(node_id, checks, tools, on_added=start):
                    return False
                await asyncio.sleep(0)  # the new check tasks queue up for their slots
        except StoreError:
            raise
        except BudgetExhaustedError as e:
            await self._growth.close(node_id, str(e), prune=True)
            return False
        except ReasoningError as e:
            await self._growth.close(node_id, f"could not plan its checks: {e}", prune=False)
            return False
        return True

    async def _branch(
        self, ctx: PlanningContext, node_id: str, proposal: HypothesisProposal
    ) -> None:
        if not await propose_sub_hypotheses(self, ctx, node_id, proposal):
            return
        async with asyncio.TaskGroup() as group:
            for sub in hypotheses_under(self._manager.tree, node_id):
                group.create_task(self._explore_hypothesis(ctx, sub.id))

    async def _conclude(self, ctx: PlanningContext) -> Synthesis:
        final = await conclude(self, ctx)
        self.emit(
            "synthesis",
            f"Primary: {final.primary.title} ({final.confidence:.2f})",
            synthesis=final.model_dump(mode="json"),
        )
        return final


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first real error inside (possibly nested) task-group errors."""
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error
