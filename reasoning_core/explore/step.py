"""What a step that grows one analysis's tree under a hypothesis is given.

Branching (an undecided hypothesis split into its mechanisms) and the "because" step (a
confirmed one asked "and why that?") work with the same parts of the analysis: its tree,
how nodes are added, the planner behind its gate, the stop signal, the event stream, the
exploration policy and the budgets. They share this base rather than repeat its wiring.
"""

from __future__ import annotations

from reasoning_core.explore.budgets import Budgets
from reasoning_core.explore.emitter import Emit
from reasoning_core.explore.growth import Growth
from reasoning_core.explore.planner_gate import PlannerGate
from reasoning_core.explore.policy import ExplorationPolicy
from reasoning_core.explore.stopping import StopSignal
from reasoning_core.tree.manager import TreeManager


class TreeStep:
    """The analysis's parts a growing step reads and writes (see the module doc)."""

    def __init__(
        self,
        *,
        manager: TreeManager,
        growth: Growth,
        gate: PlannerGate,
        stop: StopSignal,
        emit: Emit,
        policy: ExplorationPolicy,
        budgets: Budgets,
    ) -> None:
        self._manager = manager
        self._growth = growth
        self._gate = gate
        self._stop = stop
        self._emit = emit
        self._policy = policy
        self._budgets = budgets
