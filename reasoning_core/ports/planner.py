"""The Planner port: the LLM and runbook planners behind one interface."""

from __future__ import annotations

from typing import Protocol

from reasoning_core.models import (
    Evidence,
    Synthesis,
    Tree,
)
from reasoning_core.planners.contract import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)
from reasoning_core.tools.base import ToolResult


class Planner(Protocol):
    """Proposes hypotheses and checks, reads tool results as evidence, words the synthesis.

    Implementations: the LLM planner and the runbook planner. See
    reasoning_core/planners/contract.py for the call order. Raises `LLMError` (LLM planner)
    or `ReasoningError` subclasses; the explorer falls back or reports.
    """

    name: str  # "llm" or "runbook": the Answer says which planner produced it

    async def propose_hypotheses(self, ctx: PlanningContext) -> Plan: ...

    async def propose_checks(
        self, ctx: PlanningContext, hypothesis: HypothesisProposal
    ) -> list[CheckProposal]: ...

    async def interpret(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        check: CheckProposal,
        result: ToolResult,
    ) -> Evidence: ...

    async def synthesize(
        self, ctx: PlanningContext, tree: Tree, synthesis: Synthesis
    ) -> Synthesis: ...
