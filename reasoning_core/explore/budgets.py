"""Budgets of one deep analysis: how big the tree may grow and how long it may take.

`Budgets` is the frozen configuration (the composition root fills it from
settings: ``DEEP_DEADLINE_SEC`` -> `deadline_sec`); `BudgetTracker` counts what
one run has spent. The explorer asks the tracker before every planner call and
every new node, so a budget ends the growth of the tree, never the analysis:
what was found so far is still concluded and reported, with what was left out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from reasoning_core.errors import ReasoningError

#: Reasons given for work left out by a budget start with this (see report.py).
BUDGET_REASON = "budget exhausted"
DEADLINE_REASON = "deadline reached"


class Budgets(BaseModel):
    """Limits of one analysis. Depths count from the root (0): hypotheses are at 1."""

    model_config = ConfigDict(frozen=True)

    #: Hypotheses under one parent (the root, or a hypothesis being branched). Six: a
    #: runbook declares up to five competing causes, and one left out is a cause never
    #: looked at (postgres_trouble's fifth was, at four).
    max_branches: int = Field(default=6, ge=1, le=10)
    #: Deepest node: 3 allows root -> hypothesis -> sub-hypothesis -> check.
    depth_limit: int = Field(default=3, ge=2, le=5)
    #: "Because" links followed below one confirmed hypothesis (LINK_DEPTH): each is one
    #: level deeper than `depth_limit` allows branches (explore/because.py).
    max_links: int = Field(default=3, ge=0, le=6)
    #: Nodes in the whole tree, rejected and pruned ones included.
    max_nodes: int = Field(default=64, ge=2)
    #: Checks proposed for one hypothesis that are kept (a runbook hypothesis has up to six:
    #: its metrics, its log lines, its `against` vetoes).
    max_checks_per_hypothesis: int = Field(default=8, ge=1, le=10)
    #: Planner calls (each is one LLM request, plus at most one repair).
    max_llm_calls: int = Field(default=40, ge=1)
    #: Wall-clock seconds for the whole analysis (DEEP_DEADLINE_SEC).
    deadline_sec: float = Field(default=120.0, gt=0)

    @property
    def tree_depth(self) -> int:
        """The deepest node a tree may hold: branches to `depth_limit`, then the links."""
        return self.depth_limit + self.max_links


@dataclass
class BudgetTracker:
    """What one run has spent against its `Budgets`; not shared between runs."""

    budgets: Budgets
    clock: Callable[[], float] = time.monotonic
    planner_calls: int = 0
    started_at: float = field(init=False)

    def __post_init__(self) -> None:
        self.started_at = self.clock()

    @property
    def elapsed(self) -> float:
        """Seconds since the run started, by the tracker's clock."""
        return self.clock() - self.started_at

    def deadline_passed(self) -> bool:
        """True once the run has used its wall-clock budget."""
        return self.elapsed >= self.budgets.deadline_sec

    def take_planner_call(self) -> str | None:
        """Count one planner call; the reason it is refused, or None when allowed."""
        if self.deadline_passed():
            return f"{DEADLINE_REASON} after {self.budgets.deadline_sec:g} s"
        if self.planner_calls >= self.budgets.max_llm_calls:
            return f"{BUDGET_REASON}: {self.budgets.max_llm_calls} planner calls used"
        self.planner_calls += 1
        return None

    def node_refusal(self, node_count: int) -> str | None:
        """Why a new node may not be added to a tree of `node_count` nodes, or None."""
        if node_count >= self.budgets.max_nodes:
            return f"{BUDGET_REASON}: the tree reached {self.budgets.max_nodes} nodes"
        return None


class BudgetExhaustedError(ReasoningError):
    """A planner call was refused by a budget; the message says which one."""
