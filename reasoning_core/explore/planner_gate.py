"""PlannerGate: every planner call of one analysis goes through here.

A call is counted against the run's budget (`BudgetExhaustedError` when one
refuses it) and holds a slot of the model `PriorityScheduler` (the analysis's
limit on model calls; tool runs have their own, see checks.py). The gate also
knows the fallback planner: once the primary has failed, every later call
goes to the fallback, and a tree resumed after a restart continues with the
planner that grew it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from reasoning_core.explore.budgets import BudgetExhaustedError, BudgetTracker
from reasoning_core.explore.policy import Priority
from reasoning_core.explore.scheduler import PriorityScheduler
from reasoning_core.ports import Planner

T = TypeVar("T")


class PlannerGate:
    """The planner of one run, within its budget and the scheduler's slots."""

    def __init__(
        self,
        *,
        planner: Planner,
        fallback: Planner | None,
        tracker: BudgetTracker,
        scheduler: PriorityScheduler,
    ) -> None:
        self._planner = planner
        self._fallback = fallback
        self._tracker = tracker
        self._scheduler = scheduler

    @property
    def planner(self) -> Planner:
        """The planner growing the tree (the fallback once the primary has failed)."""
        return self._planner

    @property
    def name(self) -> str:
        """The planner that is (or was) growing the tree."""
        return self._planner.name

    def can_fall_back(self) -> bool:
        """True while a different fallback planner is available."""
        return self._fallback is not None and self._planner is not self._fallback

    def fall_back(self) -> Planner:
        """Switch to the fallback planner for the rest of the run; returns it."""
        if self._fallback is None:
            raise RuntimeError("no fallback planner")
        self._planner = self._fallback
        return self._planner

    def resume(self, name: str | None) -> None:
        """Continue with the planner that grew a loaded tree, when that was the fallback."""
        fallback = self._fallback
        if name and name != self._planner.name and fallback is not None and fallback.name == name:
            self._planner = fallback

    def take_call(self) -> None:
        """Count one planner call; `BudgetExhaustedError` when a budget refuses it."""
        refusal = self._tracker.take_planner_call()
        if refusal is not None:
            raise BudgetExhaustedError(refusal)

    def may_ask_llm(self) -> bool:
        """Count one LLM call outside the planner (the reflection critique) if a budget allows."""
        return self._tracker.take_planner_call() is None

    @asynccontextmanager
    async def slot(self, work: Priority) -> AsyncIterator[Planner]:
        """The planner, within the budget and while holding a scheduler slot."""
        self.take_call()
        async with self._scheduler.slot(work):
            yield self._planner

    async def ask(self, work: Priority, call: Callable[[Planner], Awaitable[T]]) -> T:
        """One planner call under the budget and a scheduler slot.

        Raises `BudgetExhaustedError` when a budget refuses it, and whatever the
        planner raises.
        """
        async with self.slot(work) as planner:
            return await call(planner)
