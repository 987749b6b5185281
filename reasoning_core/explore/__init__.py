"""Exploration: growing one hypothesis tree, concurrently, within budgets.

The entry point is `Explorer` (``explorer``). It composes narrow collaborators,
none of which knows the explorer: `Growth` (validated tree edits), `CheckRunner`
(tool runs, shared checks run once, interpretation per hypothesis), `Brancher`
(sub-hypotheses of undecided hypotheses), `ReflectionRounds` (acting on
reflection's decisions), `conclude` (merge strategies), over a `PlannerGate`
(budgeted planner calls), two `PriorityScheduler`s (model calls and tool runs,
longest chain first, then the search order), a `StopSignal` (deadline, early
stop) and an `Emitter` (events). `ExplorationPolicy` and `Budgets` are its settings.
"""

from reasoning_core.explore.budgets import Budgets
from reasoning_core.explore.explorer import Explorer
from reasoning_core.explore.policy import ExplorationPolicy

__all__ = ["Budgets", "ExplorationPolicy", "Explorer"]
