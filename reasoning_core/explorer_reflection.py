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
from typing import TYPE_CHECKING

from reasoning_core.budgets import DEADLINE_REASON
from reasoning_core.errors import ReasoningError, StoreError
from reasoning_core.explorer_policy import ROOT_PRIORITY
from reasoning_core.explorer_state import check_of, proposal_of
from reasoning_core.planning import CheckProposal, HypothesisProposal, PlanningContext
from reasoning_core.reflection import (
    Reflector,
    plan_revised_message,
    reflection_data,
    reflection_message,
)
from reasoning_core.reflection_decision import RetryPlan
from reasoning_core.reflection_retry import direct_retry, finish, pick, retry_context
from reasoning_core.reflection_revision import failure_reason, set_aside
from reasoning_core.tree.edits import ROOT_ID
from reasoning_core.tree.walk import is_active

if TYPE_CHECKING:
    from reasoning_core.explorer import Explorer

#: Reflection rounds in one analysis, at most (each retry or revision is one).
MAX_ROUNDS = 6


async def reflect(explorer: Explorer, reflector: Reflector, ctx: PlanningContext) -> None:
    """Reflection rounds until a round decides to continue (see the module docstring)."""
    for _ in range(MAX_ROUNDS):
        if (stop := explorer.stop_reason) is not None and stop.startswith(DEADLINE_REASON):
            return
        tree = explorer.manager.tree
        checkpoints = reflector.checkpoints(tree)
        if not checkpoints:
            return
        reflection = await reflector.reflect(tree, checkpoints, may_ask=explorer.may_ask_llm)
        explorer.emit("reflection", reflection_message(reflection), **reflection_data(reflection))
        decision = reflection.decision
        acted = False
        if decision.action != "continue":
            explorer.lift_early_stop()  # the new work must not be pruned by the old stop
        if decision.action == "retry":
            acted = await retry_checks(explorer, ctx, decision.retries)
        elif decision.action == "revise":
            acted = await revise_plan(explorer, reflector, ctx)
        if not acted:
            return


async def retry_checks(explorer: Explorer, ctx: PlanningContext, plans: list[RetryPlan]) -> bool:
    """Add and run a retry for each plan; True when at least one started."""
    started = 0
    async with asyncio.TaskGroup() as group:
        for plan in plans:
            started += await _retry_one(explorer, ctx, plan, group)
    return started > 0


async def _retry_one(
    explorer: Explorer, ctx: PlanningContext, plan: RetryPlan, group: asyncio.TaskGroup
) -> bool:
    tree = explorer.manager.tree
    node = tree.nodes.get(plan.node_id)
    hypothesis = tree.nodes.get(node.parent_id or "") if node is not None else None
    original = check_of(node) if node is not None else None
    if hypothesis is None or original is None or not is_active(hypothesis):
        return False
    proposal = proposal_of(hypothesis)
    check_ctx = retry_context(ctx, original, plan)
    check = direct_retry(original, plan) or await _replanned(
        explorer, check_ctx, hypothesis.id, proposal, original
    )
    if check is None:
        return False
    node_id = await explorer.growth.add_retry(
        hypothesis.id, finish(check, original, plan), retry_of=plan.node_id, how=plan.how
    )
    if node_id is None:
        return False
    if node is not None and node.status == "completed":
        # The retry stands in for the check: both at once would count its evidence twice.
        await explorer.growth.close(plan.node_id, f"superseded by its retry {node_id}", prune=True)
    explorer.checks.start(group, check_ctx, node_id, proposal)
    return True


async def _replanned(
    explorer: Explorer,
    ctx: PlanningContext,
    hypothesis_id: str,
    proposal: HypothesisProposal,
    original: CheckProposal,
) -> CheckProposal | None:
    """The planner's check again, planned in the retry's context (e.g. a wider window)."""
    try:
        checks = await explorer.ask(
            explorer.priority_of(hypothesis_id), lambda p: p.propose_checks(ctx, proposal)
        )
    except StoreError:
        raise
    except ReasoningError as e:
        explorer.emit("reasoning", f"Could not retry {original.key}: {e}")
        return None
    return pick(list(checks), original)


async def revise_plan(explorer: Explorer, reflector: Reflector, ctx: PlanningContext) -> bool:
    """One plan revision; False when none is left, or nothing new came of it."""
    tree = explorer.manager.tree
    reason = failure_reason(tree)
    revised = reflector.start_revision(ctx, tree, reason=reason)
    if revised is None:
        return False
    explorer.emit("reasoning", "Revising the plan…")
    try:
        plan = await explorer.ask(ROOT_PRIORITY, lambda p: p.propose_hypotheses(revised))
    except StoreError:
        raise
    except ReasoningError as e:
        explorer.emit("reasoning", f"The plan could not be revised: {e}")
        return False
    accepted, refused = reflector.screen(tree, plan.hypotheses)
    for proposal, why in refused:
        explorer.emit(
            "node_rejected",
            f"Ignored hypothesis {proposal.title!r}: {why}",
            dropped=True,
            reason=why,
        )
    if not accepted or plan.conclusion is not None:
        explorer.emit("reasoning", "The plan was not revised: nothing new was proposed")
        return False
    revision = await explorer.manager.begin_revision()
    aside = set_aside(tree, revision=revision, reason=reason)
    for node_id, why in aside:
        await explorer.growth.close(node_id, why, prune=False)
    failure = revised.previous_failure or reason
    titles = [p.title for p in accepted]
    explorer.emit(
        "plan_revised",
        plan_revised_message(revision, failure, titles),
        revision=revision,
        previous_failure=failure,
        added=titles,
        set_aside=[n for n, _ in aside],
    )
    reflector.revised()
    parameters = {**revised.parameters, **plan.parameters}
    planned = revised.model_copy(update={"parameters": parameters})
    async with asyncio.TaskGroup() as group:

        def explore(node_id: str) -> None:
            group.create_task(explorer.explore_hypothesis(planned, node_id))

        await explorer.growth.add_hypotheses(
            ROOT_ID,
            accepted,
            ctx=revised,
            planner=explorer.planner_name,
            parameters=parameters,
            on_added=explore,
        )
    return True
