"""The Planner port: the LLM and runbook planners behind one interface."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from reasoning_core.models import (
    Evidence,
    Synthesis,
    Tree,
)
from reasoning_core.ports.planning import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)
from reasoning_core.tools.base import ToolResult


class Planner(Protocol):
    """Proposes hypotheses and checks, reads tool results as evidence, words the synthesis.

    Implementations: the LLM planner and the runbook planner. See
    reasoning_core/ports/planning.py for the call order. Raises `LLMError` (LLM planner)
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
    ) -> Evidence:
        """One result as evidence. Called per check, without a model slot, unless the
        planner is also a `BatchInterpreter`: then only as the fallback for a check the
        batch left without a verdict, in a model slot."""
        ...

    async def synthesize(
        self, ctx: PlanningContext, tree: Tree, synthesis: Synthesis
    ) -> Synthesis: ...


@runtime_checkable
class LinkFollower(Protocol):
    """A planner that knows what a finding waits on or comes from: the "because" step.

    Given a confirmed hypothesis and its confirmed results (`findings`, each with the
    check that found it), the hypotheses their data names — each with a `link` — or []
    when none does. The explorer grows them under the hypothesis with checks of their own
    (`propose_checks`) before the synthesis, a bounded number of links deep.
    """

    async def propose_links(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        findings: Sequence[tuple[CheckProposal, Evidence]],
    ) -> list[HypothesisProposal]: ...


@runtime_checkable
class BatchInterpreter(Protocol):
    """A planner whose interpretation asks a model: one call for all of a hypothesis's results.

    The explorer calls it once per hypothesis (one model slot); the list is aligned
    with `results`, None where the reply gave no usable verdict for that check (the
    explorer then asks `Planner.interpret` for it alone). Raises `ReasoningError`
    when nothing in the reply is usable.
    """

    async def interpret_checks(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        results: Sequence[tuple[CheckProposal, ToolResult]],
    ) -> list[Evidence | None]: ...
