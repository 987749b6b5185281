"""The explorer: grows a hypothesis tree by asking a `Planner` and running checks.

One `Explorer` runs one analysis on a `TreeManager` whose tree already exists
(created, or loaded to continue after a restart):

1. the root gets competing hypotheses from ``propose_hypotheses`` (unless it
   has them already); a `Plan.conclusion` becomes the "none" hypothesis;
2. each hypothesis gets checks from ``propose_checks`` (verification nodes);
3. each check runs through its tool (a check shared with another hypothesis
   runs once); the results are interpreted by the planner, one model call per
   hypothesis (or by its verdict rules, without a model), and recorded with
   ``set_node_results`` (aggregation follows);
4. an undecided hypothesis is branched into sub-hypotheses (`Brancher`); a
   confirmed one grows the "because" links its evidence names, each explored in
   turn (`Because`): the synthesis names the deepest confirmed link;
5. with a `Reflector`, reflection rounds follow each wave of work: checks
   retried another way, or the plan revised (`ReflectionRounds`);
6. the synthesis is merged from the tree and the planner's wording
   (`conclude`) and kept in `synthesis`.

Independent work runs concurrently, under two limits: every model call (a
planner call, one interpretation of a hypothesis's results) holds a slot of
the model `PriorityScheduler` (`model_concurrency`: the model is the scarce
resource), every tool run a slot of the tool one (`tool_concurrency`: tools are
cheap and local), so a tool run never holds a model slot and a model call never
waits behind tool runs. Waiting work starts longest remaining chain first, then
in the policy's search order (policy.py); each hypothesis and check starts as
soon as it is in the tree, checks shared between hypotheses run once
(checks.py), so wall time follows the tree's critical path rather than its
node count. Completed checks are never run again: a loaded tree resumes with
its open work only.

The explorer composes its collaborators and gives each the narrow things it
needs: the `TreeManager`, the `Growth` that edits the tree, the `PlannerGate`
through which every planner call goes, the `PriorityScheduler`, the
`StopSignal`, and the `Emitter` for events. None of them knows the explorer.

Bad proposals never stop the analysis: hypotheses that are duplicates, beyond
`max_branches` or without a title are dropped (logged, with an event); checks
for an unknown tool, failed tool runs and uninterpretable results become
rejected nodes with the reason, and the report lists them as not checked.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping

from reasoning_core.errors import LLMError, ReasoningError, StoreError
from reasoning_core.events import Event, SynthesisEvent
from reasoning_core.explore.because import Because
from reasoning_core.explore.branching import Brancher
from reasoning_core.explore.budgets import BudgetExhaustedError, Budgets, BudgetTracker
from reasoning_core.explore.checks import CheckRunner
from reasoning_core.explore.emitter import Emitter
from reasoning_core.explore.growth import Growth
from reasoning_core.explore.merge import conclude
from reasoning_core.explore.planner_gate import PlannerGate
from reasoning_core.explore.policy import (
    ROOT_PRIORITY,
    ExplorationPolicy,
    chain_priority,
    priority,
    remaining_rounds,
)
from reasoning_core.explore.progress import line
from reasoning_core.explore.reflection_rounds import ReflectionRounds
from reasoning_core.explore.scheduler import PriorityScheduler
from reasoning_core.explore.state import (
    checks_under,
    hypotheses_under,
    links_under,
    planner_of,
    proposal_of,
    with_plan_parameters,
)
from reasoning_core.explore.stopping import StopSignal
from reasoning_core.models import Synthesis
from reasoning_core.ports import Planner
from reasoning_core.ports.planning import HypothesisProposal, PlanningContext
from reasoning_core.reflection.reflector import Reflector
from reasoning_core.tools.base import Tool
from reasoning_core.tree.edits import ROOT_ID
from reasoning_core.tree.manager import TreeManager

log = logging.getLogger(__name__)


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
        model_concurrency: int = 4,
        tool_concurrency: int = 8,
        clock: Callable[[], float] = time.monotonic,
        fallback_planner: Planner | None = None,
        reflector: Reflector | None = None,
        language: str = "en",
    ) -> None:
        self._manager = manager
        self._reflector = reflector
        self._budgets = budgets or Budgets()
        self._policy = policy or ExplorationPolicy()
        tracker = BudgetTracker(self._budgets, clock)
        self._model_slots = PriorityScheduler(model_concurrency)
        self._tool_slots = PriorityScheduler(tool_concurrency)
        self._emit = Emitter(manager, language)
        self._stop = StopSignal(
            tracker=tracker, stop_confidence=self._policy.stop_confidence, emit=self._emit
        )
        self._gate = PlannerGate(
            planner=planner,
            fallback=fallback_planner,
            tracker=tracker,
            scheduler=self._model_slots,
        )
        self._growth = Growth(
            manager=manager,
            budgets=self._budgets,
            tracker=tracker,
            emit=self._emit,
            language=language,
        )
        self._checks = CheckRunner(
            manager=manager,
            growth=self._growth,
            gate=self._gate,
            tool_scheduler=self._tool_slots,
            stop=self._stop,
            emit=self._emit,
            tools=tools,
            policy=self._policy,
            depth_limit=self._budgets.depth_limit,
        )
        self._brancher = Brancher(
            manager=manager,
            growth=self._growth,
            gate=self._gate,
            stop=self._stop,
            emit=self._emit,
            policy=self._policy,
            budgets=self._budgets,
        )
        self._because = Because(
            manager=manager,
            growth=self._growth,
            gate=self._gate,
            stop=self._stop,
            emit=self._emit,
            policy=self._policy,
            budgets=self._budgets,
        )
        #: The merged synthesis, set when `explore` has finished.
        self.synthesis: Synthesis | None = None

    @property
    def tool_runs(self) -> dict[str, int]:
        """Tool runs started in this analysis, by tool name."""
        return dict(self._checks.runs)

    @property
    def reflector(self) -> Reflector | None:
        """Reflection of this analysis (None: the plan runs to the end as it is)."""
        return self._reflector

    @property
    def planner_name(self) -> str:
        """The planner that is (or was) growing the tree."""
        return self._gate.name

    @property
    def reused_runs(self) -> int:
        """Checks that reused an identical check's tool run in this analysis."""
        return self._checks.reused_runs

    @property
    def model_slots(self) -> PriorityScheduler:
        """The limit on model calls (its counters: `peak`, `granted`)."""
        return self._model_slots

    @property
    def tool_slots(self) -> PriorityScheduler:
        """The limit on tool runs (its counters: `peak`, `granted`)."""
        return self._tool_slots

    # --- the run ---------------------------------------------------------------------

    async def explore(self, ctx: PlanningContext) -> AsyncIterator[Event]:
        """Grow the tree and conclude; yields an event for every step."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._emit.connect(queue.put_nowait)
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
                        await self._reflection_rounds(self._reflector).run(planned)
            except TimeoutError:
                self._stop.stop_at_deadline()
            except BaseExceptionGroup as group:
                raise _first_leaf(group) from group
            await self._growth.close_open_work(self._stop.reason or "not run")
            self.synthesis = await self._conclude(ctx)
        finally:
            await self._checks.close()
            queue.put_nowait(None)

    def _reflection_rounds(self, reflector: Reflector) -> ReflectionRounds:
        return ReflectionRounds(
            reflector=reflector,
            manager=self._manager,
            growth=self._growth,
            checks=self._checks,
            gate=self._gate,
            stop=self._stop,
            emit=self._emit,
            policy=self._policy,
            explore_hypothesis=self._explore_hypothesis,
        )

    async def _grow(self, ctx: PlanningContext) -> None:
        tree = self._manager.tree
        self._gate.resume(planner_of(tree))
        async with asyncio.TaskGroup() as group:
            if not hypotheses_under(tree, ROOT_ID, active_only=False):
                await self._plan(ctx, group)
                return
            ctx = with_plan_parameters(ctx, tree)
            for node in hypotheses_under(tree, ROOT_ID):
                group.create_task(self._explore_hypothesis(ctx, node.id))

    async def _plan(self, ctx: PlanningContext, group: asyncio.TaskGroup) -> None:
        """Propose hypotheses; each one is explored as soon as it is in the tree."""
        gate = self._gate
        self._emit(line("proposing"))
        try:
            plan = await gate.ask(ROOT_PRIORITY, lambda p: p.propose_hypotheses(ctx))
        except LLMError as e:
            if not gate.can_fall_back():
                raise
            failed = gate.name
            log.warning("%s planner failed (%s); falling back", failed, e)
            fallback = gate.fall_back()
            self._emit(line("fallback", failed=failed, error=e, fallback=fallback.name))
            plan = await gate.ask(ROOT_PRIORITY, lambda p: p.propose_hypotheses(ctx))
        if plan.conclusion is not None:
            await self._growth.record_conclusion(plan, gate.name)
            return
        planned = ctx.model_copy(update={"parameters": {**ctx.parameters, **plan.parameters}})

        def explore(node_id: str) -> None:
            group.create_task(self._explore_hypothesis(planned, node_id))

        await self._growth.add_hypotheses(
            ROOT_ID,
            plan.hypotheses,
            ctx=ctx,
            planner=gate.name,
            parameters=plan.parameters,
            on_added=explore,
        )

    async def _explore_hypothesis(self, ctx: PlanningContext, node_id: str) -> None:
        """Plan and run the checks of one hypothesis, then branch it, then follow the
        links its findings name."""
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
        await self._follow_links(ctx, node_id, proposal)

    async def _plan_checks(
        self,
        ctx: PlanningContext,
        node_id: str,
        proposal: HypothesisProposal,
        group: asyncio.TaskGroup,
    ) -> bool:
        """Ask for checks, add them all, then start them; the model slot is held until
        they wait for their slots too, so the order chooses between them and work that
        was already waiting."""
        if (reason := self._stop.reason) is not None:
            await self._growth.close(node_id, reason, prune=True)
            return False
        node = self._manager.tree.nodes[node_id]
        rounds = remaining_rounds("checks", node.depth, self._budgets.depth_limit)
        work = chain_priority(rounds, priority(node, self._policy.order))
        try:
            async with self._gate.slot(work) as planner:
                checks = await planner.propose_checks(ctx, proposal)
                added: list[str] = []

                def on_added(check_id: str) -> None:
                    # Checks interpreted one by one start as soon as they are added; those
                    # a model interprets together start once they are all in the tree.
                    if self._checks.interprets_together:
                        added.append(check_id)
                    else:
                        self._checks.start(group, ctx, check_id, proposal)

                tools = self._checks.tool_names
                if not await self._growth.add_checks(node_id, checks, tools, on_added=on_added):
                    return False
                self._checks.start_many(group, ctx, added, proposal)
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
        if not await self._brancher.propose_sub_hypotheses(ctx, node_id, proposal):
            return
        async with asyncio.TaskGroup() as group:
            for sub in hypotheses_under(self._manager.tree, node_id):
                group.create_task(self._explore_hypothesis(ctx, sub.id))

    async def _follow_links(
        self, ctx: PlanningContext, node_id: str, proposal: HypothesisProposal
    ) -> None:
        if not await self._because.propose_links(ctx, node_id, proposal):
            return
        try:
            async with asyncio.TaskGroup() as group:
                for link in links_under(self._manager.tree, node_id):
                    group.create_task(self._explore_hypothesis(ctx, link.id))
        finally:
            self._stop.release(node_id)
        self._stop.after_result(self._manager.tree.synthesis)  # held back while they ran

    async def _conclude(self, ctx: PlanningContext) -> Synthesis:
        final = await conclude(
            ctx,
            manager=self._manager,
            gate=self._gate,
            stop=self._stop,
            emit=self._emit,
            strategy=self._policy.merge,
        )
        self._emit(
            line("primary", title=final.primary.title, p=final.confidence),
            SynthesisEvent(synthesis=final),
        )
        return final


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first real error inside (possibly nested) task-group errors."""
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error
