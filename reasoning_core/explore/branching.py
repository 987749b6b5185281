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

from reasoning_core.errors import ReasoningError, StoreError
from reasoning_core.explore.policy import (
    chain_priority,
    is_undecided,
    priority,
    remaining_rounds,
)
from reasoning_core.explore.progress import line
from reasoning_core.explore.state import checks_under, focused, hypotheses_under
from reasoning_core.explore.step import TreeStep
from reasoning_core.ports.planning import HypothesisProposal, PlanningContext
from reasoning_core.tree.aggregation import ceiling
from reasoning_core.tree.walk import is_active

#: A hypothesis this close to its ceiling is held there (float rounding aside).
_AT_CEILING = 1e-6


class Brancher(TreeStep):
    """Splits undecided hypotheses of one analysis into their mechanisms."""

    def should_branch(self, node_id: str) -> bool:
        """An active, checked, undecided hypothesis with room below it, while work may start.
        One held at its ceiling is as decided as its evidence can make it: no branching."""
        tree = self._manager.tree
        node = tree.nodes[node_id]
        p = node.confidence if node.confidence is not None else node.prior
        return (
            self._stop.reason is None
            and is_active(node)
            and is_undecided(p, self._policy)
            and ceiling(node) - p > _AT_CEILING
            and node.depth + 2 <= self._budgets.depth_limit
            and bool(checks_under(tree, node_id))
        )

    async def propose_sub_hypotheses(
        self, ctx: PlanningContext, node_id: str, proposal: HypothesisProposal
    ) -> bool:
        """True when the hypothesis has sub-hypotheses to explore (new, or kept from before)."""
        tree = self._manager.tree
        if hypotheses_under(tree, node_id, active_only=False):
            return bool(hypotheses_under(tree, node_id))
        if not self.should_branch(node_id):
            return False
        node = tree.nodes[node_id]
        self._emit(line("undecided", id=node_id, p=node.confidence or node.prior))
        sub_ctx = focused(ctx, proposal, tree)
        try:
            rounds = remaining_rounds("branch", node.depth, self._budgets.depth_limit)
            plan = await self._gate.ask(
                chain_priority(rounds, priority(node, self._policy.order)),
                lambda planner: planner.propose_hypotheses(sub_ctx),
            )
        except StoreError:
            raise
        except ReasoningError as e:
            self._emit(line("no_branch", id=node_id, error=e))
            return False
        if plan.conclusion is not None or not plan.hypotheses:
            return False
        added = await self._growth.add_hypotheses(
            node_id,
            plan.hypotheses,
            ctx=sub_ctx,
            planner=self._gate.name,
            parameters=plan.parameters,
        )
        return added > 0
