"""Branching: an undecided hypothesis is split into sub-hypotheses (its mechanisms).

After its checks, a hypothesis whose verdict is still undecided
(``max(p, 1 - p) < branching_threshold``) asks the planner, through a focused
context, for the distinct mechanisms that could make it true. They hang under
it as sub-hypotheses with checks of their own; aggregation then takes the
noisy-OR of the mechanisms as the hypothesis's base. Branching needs room for
the sub-hypotheses' checks within the depth limit, and never runs after the
analysis stopped. A tree loaded after a restart keeps the branches it had.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasoning_core.errors import ReasoningError, StoreError
from reasoning_core.explorer_policy import is_undecided
from reasoning_core.explorer_state import checks_under, focused, hypotheses_under
from reasoning_core.planning import HypothesisProposal, PlanningContext
from reasoning_core.tree.walk import is_active

if TYPE_CHECKING:
    from reasoning_core.explorer import Explorer


def should_branch(explorer: Explorer, node_id: str) -> bool:
    """An active, checked, undecided hypothesis with room below it, while work may start."""
    tree = explorer.manager.tree
    node = tree.nodes[node_id]
    p = node.confidence if node.confidence is not None else node.prior
    return (
        explorer.stop_reason is None
        and is_active(node)
        and is_undecided(p, explorer.policy)
        and node.depth + 2 <= explorer.budgets.depth_limit
        and bool(checks_under(tree, node_id))
    )


async def propose_sub_hypotheses(
    explorer: Explorer, ctx: PlanningContext, node_id: str, proposal: HypothesisProposal
) -> bool:
    """True when the hypothesis has sub-hypotheses to explore (new, or from before a restart)."""
    tree = explorer.manager.tree
    if hypotheses_under(tree, node_id, active_only=False):
        return bool(hypotheses_under(tree, node_id))
    if not should_branch(explorer, node_id):
        return False
    node = tree.nodes[node_id]
    explorer.emit(
        "reasoning", f"{node_id} is undecided ({node.confidence or node.prior:.2f}): "
        "looking for the mechanisms behind it",
    )  # fmt: skip
    sub_ctx = focused(ctx, proposal, tree)
    try:
        plan = await explorer.ask(
            explorer.priority_of(node_id), lambda planner: planner.propose_hypotheses(sub_ctx)
        )
    except StoreError:
        raise
    except ReasoningError as e:
        explorer.emit("reasoning", f"Could not branch {node_id}: {e}")
        return False
    if plan.conclusion is not None or not plan.hypotheses:
        return False
    added = await explorer.growth.add_hypotheses(
        node_id, plan.hypotheses, ctx=sub_ctx, planner=explorer.planner_name,
        parameters=plan.parameters,
    )  # fmt: skip
    return added > 0
