"""Reflection rounds of the explorer: after each wave of work, reconsider, then act.

A wave is everything the explorer had to do (the first plan, then each round's
retries or new hypotheses). After it, the `Reflector` looks for checkpoints
and decides; the explorer then acts and starts the next wave:

- **retry**: each `RetryPlan` becomes a new check beside the one it retries
  (reflection_retry), marked with ``retry_of``, and runs at once; a retried
  check that had a result is pruned ("superseded"), so its evidence never
  counts twice;
- **revise**: the planner gets "the previous attempt failed because ..." and
  the keys to avoid; repeats are refused; if something new remains, the tree's
  revision is counted (`TreeManager.begin_revision`), the failed first-level
  hypotheses are rejected with the reason (kept in the tree) and the new ones
  are grown;
- **continue**: the rounds end.

Rounds end too at the deadline, when an action could not be carried out, or
after `MAX_ROUNDS`; a confident early stop is lifted when a round decides to
look further. Each round emits a
``reflection`` event, each revision a ``plan_revised`` event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from reasoning_core.errors import ReasoningError, StoreError
from reasoning_core.events import NodeRejectedEvent
from reasoning_core.explore.checks import CheckRunner
from reasoning_core.explore.emitter import Emit
from reasoning_core.explore.growth import Growth
from reasoning_core.explore.planner_gate import PlannerGate
from reasoning_core.explore.policy import ROOT_PRIORITY, ExplorationPolicy, priority
from reasoning_core.explore.progress import line
from reasoning_core.explore.state import check_of, proposal_of
from reasoning_core.explore.stopping import StopSignal
from reasoning_core.ports.planning import CheckProposal, HypothesisProposal, PlanningContext
from reasoning_core.reflection.decision import RetryPlan
from reasoning_core.reflection.reflector import (
    Reflector,
    plan_revised_event,
    plan_revised_message,
    reflection_event,
    reflection_message,
)
from reasoning_core.reflection.retry import direct_retry, finish, pick, retry_context
from reasoning_core.reflection.revision import failure_reason, set_aside
from reasoning_core.tree.edits import ROOT_ID
from reasoning_core.tree.manager import TreeManager
from reasoning_core.tree.walk import is_active

#: Reflection rounds in one analysis, at most (each retry or revision is one).
MAX_ROUNDS = 6

#: Plans and runs one hypothesis of the tree (the explorer's own step).
ExploreHypothesis = Callable[[PlanningContext, str], Coroutine[Any, Any, None]]


class ReflectionRounds:
    """The reflection rounds of one analysis (see the module docstring)."""

    def __init__(
        self,
        *,
        reflector: Reflector,
        manager: TreeManager,
        growth: Growth,
        checks: CheckRunner,
        gate: PlannerGate,
        stop: StopSignal,
        emit: Emit,
        policy: ExplorationPolicy,
        explore_hypothesis: ExploreHypothesis,
    ) -> None:
        self._reflector = reflector
        self._manager = manager
        self._growth = growth
        self._checks = checks
        self._gate = gate
        self._stop = stop
        self._emit = emit
        self._policy = policy
        self._explore_hypothesis = explore_hypothesis

    async def run(self, ctx: PlanningContext) -> None:
        """Reflection rounds until a round decides to continue."""
        reflector = self._reflector
        for _ in range(MAX_ROUNDS):
            if self._stop.deadline_reached:
                return
            tree = self._manager.tree
            checkpoints = reflector.checkpoints(tree)
            if not checkpoints:
                return
            reflection = await reflector.reflect(tree, checkpoints, may_ask=self._gate.may_ask_llm)
            message = reflection_message(reflection, ctx.language)
            self._emit(message, reflection_event(reflection))
            decision = reflection.decision
            acted = False
            if decision.action != "continue":
                self._stop.lift_early_stop()  # the new work must not be pruned by the old stop
            if decision.action == "retry":
                acted = await self.retry_checks(ctx, decision.retries)
            elif decision.action == "revise":
                acted = await self.revise_plan(ctx)
            if not acted:
                return

    async def retry_checks(self, ctx: PlanningContext, plans: list[RetryPlan]) -> bool:
        """Add and run a retry for each plan; True when at least one started."""
        started = 0
        async with asyncio.TaskGroup() as group:
            for plan in plans:
                started += await self._retry_one(ctx, plan, group)
        return started > 0

    async def _retry_one(
        self, ctx: PlanningContext, plan: RetryPlan, group: asyncio.TaskGroup
    ) -> bool:
        tree = self._manager.tree
        node = tree.nodes.get(plan.node_id)
        hypothesis = tree.nodes.get(node.parent_id or "") if node is not None else None
        original = check_of(node) if node is not None else None
        if hypothesis is None or original is None or not is_active(hypothesis):
            return False
        proposal = proposal_of(hypothesis)
        check_ctx = retry_context(ctx, original, plan)
        check = direct_retry(original, plan) or await self._replanned(
            check_ctx, hypothesis.id, proposal, original
        )
        if check is None:
            return False
        node_id = await self._growth.add_retry(
            hypothesis.id,
            finish(check, original, plan, ctx.language),
            retry_of=plan.node_id,
            how=plan.how,
        )
        if node_id is None:
            return False
        if node is not None and node.status == "completed":
            # The retry stands in for the check: both at once would count its evidence twice.
            why = f"superseded by its retry {node_id}"
            await self._growth.close(plan.node_id, why, prune=True)
        self._checks.start(group, check_ctx, node_id, proposal)
        return True

    async def _replanned(
        self,
        ctx: PlanningContext,
        hypothesis_id: str,
        proposal: HypothesisProposal,
        original: CheckProposal,
    ) -> CheckProposal | None:
        """The planner's check again, planned in the retry's context (e.g. a wider window)."""
        work = priority(self._manager.tree.nodes[hypothesis_id], self._policy.order)
        try:
            checks = await self._gate.ask(work, lambda p: p.propose_checks(ctx, proposal))
        except StoreError:
            raise
        except ReasoningError as e:
            self._emit(line("no_retry", key=original.key, error=e))
            return None
        return pick(list(checks), original)

    async def revise_plan(self, ctx: PlanningContext) -> bool:
        """One plan revision; False when none is left, or nothing new came of it."""
        reflector = self._reflector
        tree = self._manager.tree
        reason = failure_reason(tree)
        revised = reflector.start_revision(ctx, tree, reason=reason)
        if revised is None:
            return False
        self._emit(line("revising"))
        try:
            plan = await self._gate.ask(ROOT_PRIORITY, lambda p: p.propose_hypotheses(revised))
        except StoreError:
            raise
        except ReasoningError as e:
            self._emit(line("revise_failed", error=e))
            return False
        accepted, refused = reflector.screen(tree, plan.hypotheses)
        for proposal, why in refused:
            self._emit(
                line("ignored_hypothesis", title=proposal.title, reason=why),
                NodeRejectedEvent(dropped=True, reason=why),
            )
        if not accepted or plan.conclusion is not None:
            self._emit(line("not_revised"))
            return False
        revision = await self._manager.begin_revision()
        aside = set_aside(tree, revision=revision, reason=reason)
        for node_id, why in aside:
            await self._growth.close(node_id, why, prune=False)
        failure = revised.previous_failure or reason
        titles = [p.title for p in accepted]
        self._emit(
            plan_revised_message(revision, failure, titles, ctx.language),
            plan_revised_event(revision, failure, titles, set_aside=[n for n, _ in aside]),
        )
        reflector.revised()
        parameters = {**revised.parameters, **plan.parameters}
        planned = revised.model_copy(update={"parameters": parameters})
        async with asyncio.TaskGroup() as group:

            def explore(node_id: str) -> None:
                group.create_task(self._explore_hypothesis(planned, node_id))

            await self._growth.add_hypotheses(
                ROOT_ID,
                accepted,
                ctx=revised,
                planner=self._gate.name,
                parameters=parameters,
                on_added=explore,
            )
        return True
