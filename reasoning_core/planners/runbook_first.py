"""RunbookFirstPlanner: the runbooks decide, the language model adds to them.

With a model configured, the deep path plans with this planner (the `Planner` port):

- a question a runbook matches is planned, checked and judged by the runbook planner
  exactly as without a model: the runbook's hypotheses, its checks, its verdict rules,
  and the confidence of the aggregation; no model call before the checks run;
- the model adds hypotheses the runbook does not have only on a revision (the runbook's
  were refuted, nothing was established, or two ran close): they are keyed ``llm_...``,
  their checks are the model's, and the model interprets those checks and no other.
  No verdict rule backs those readings, so such a hypothesis's p is capped at
  `MODEL_ONLY_MAX`, below "established": it is reported as the model's candidate and
  can never outrank a cause the runbook's rules established (a confidently wrong model
  once turned a close race between two runbook causes into its own "DNS" at 1.00);
- the model words the recommendations only for a cause it proposed (the runbook words
  its own), and never chooses the primary cause: the numbers do;
- a question no runbook matches (or whose runbook's tables or tools are not there) is
  planned by the model as the LLM planner does alone.

A model that fails (no usable answer) costs its additions, never the runbook's analysis.
The report names the hypotheses keyed ``llm_`` as the model's (answers/deep_analyst.py).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from reasoning_core.errors import LLMError, ReasoningError
from reasoning_core.models import Evidence, Synthesis, Tree
from reasoning_core.planners.runbook.plan import DataSourceError, NoRunbookError
from reasoning_core.planners.runbook.planner import RunbookPlanner, state_of
from reasoning_core.ports.planner import BatchInterpreter, Planner
from reasoning_core.ports.planning import (
    MODEL_KEY_PREFIX,
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)
from reasoning_core.tools.base import ToolResult
from reasoning_core.tree.synthesis import ESTABLISHED_MIN

log = logging.getLogger(__name__)

MODEL_PREFIX = MODEL_KEY_PREFIX
_KEY_MAX = 64
#: The highest p of a hypothesis the model added beside a runbook's: a candidate, below
#: ESTABLISHED_MIN and so below any cause the runbook's verdict rules established.
MODEL_ONLY_MAX = ESTABLISHED_MIN - 0.05


class ModelPlanner(Planner, BatchInterpreter, Protocol):
    """A planner that asks a model, one call per hypothesis for its results: what
    `RunbookFirstPlanner` adds to the runbooks with (`LLMPlanner`, `ToolAgent`)."""


class RunbookFirstPlanner:
    """The runbook planner's analysis, with the model planner's additions where it may add."""

    name = "runbook"

    def __init__(self, runbook: RunbookPlanner, model: ModelPlanner) -> None:
        self._runbook = runbook
        self._model = model

    async def propose_hypotheses(self, ctx: PlanningContext) -> Plan:
        """The runbook's plan; the model's when no runbook matches; on a revision of a
        runbook's plan, the runbook's fallbacks and the model's new hypotheses."""
        if state_of(ctx.parameters) is None:
            try:
                return await self._runbook.propose_hypotheses(ctx)
            except NoRunbookError:
                log.info("no runbook matches; the model plans the analysis")
                return _tagged(await self._model.propose_hypotheses(ctx))
            except DataSourceError as e:  # it matched the words, but its data is not here
                log.info("the matching runbook cannot run here (%s); the model plans", e)
                return _tagged(await self._model.propose_hypotheses(ctx))
        plan = await self._runbook.propose_hypotheses(ctx)
        if not ctx.previous_failure:
            return plan  # branching: the runbook says how far its hypotheses split
        try:
            added = await self._model.propose_hypotheses(ctx)
        except ReasoningError as e:
            log.info("the model added no hypothesis to the revision: %s", e)
            return plan
        taken = {h.key for h in plan.hypotheses} | set(ctx.excluded_hypotheses)
        extra = [
            h.model_copy(update={"ceiling": MODEL_ONLY_MAX, "prior": min(h.prior, MODEL_ONLY_MAX)})
            for h in _tagged(added).hypotheses
            if h.key not in taken
        ]
        return plan.model_copy(update={"hypotheses": [*plan.hypotheses, *extra]})

    async def propose_checks(
        self, ctx: PlanningContext, hypothesis: HypothesisProposal
    ) -> list[CheckProposal]:
        if not is_model_key(hypothesis.key):
            return await self._runbook.propose_checks(ctx, hypothesis)
        checks = await self._model.propose_checks(ctx, _untagged(hypothesis))
        return [c.model_copy(update={"extra": {**c.extra, "from": "model"}}) for c in checks]

    async def propose_links(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        findings: Sequence[tuple[CheckProposal, Evidence]],
    ) -> list[HypothesisProposal]:
        """The runbook's links (the model's hypotheses grow none: no rule reads them)."""
        if is_model_key(hypothesis.key):
            return []
        return await self._runbook.propose_links(ctx, hypothesis, findings)

    async def interpret(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        check: CheckProposal,
        result: ToolResult,
    ) -> Evidence:
        """A runbook check by its verdict rule; only the model's own checks by the model
        (inconclusive when its reply is unusable)."""
        if not is_model_key(hypothesis.key):
            return await self._runbook.interpret(ctx, hypothesis, check, result)
        try:
            return await self._model.interpret(ctx, _untagged(hypothesis), check, result)
        except LLMError as e:
            log.info("the model's reading of check %s is unusable: %s", check.key, e)
            return Evidence(confirmed=None, confidence=0.0, text=result.for_prompt(max_chars=200))

    async def interpret_checks(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        results: Sequence[tuple[CheckProposal, ToolResult]],
    ) -> list[Evidence | None]:
        """A runbook hypothesis's results by their verdict rules, without a model; the
        model's own hypothesis's in one model call (the `BatchInterpreter` port)."""
        if is_model_key(hypothesis.key):
            return await self._model.interpret_checks(ctx, _untagged(hypothesis), results)
        return [
            await self._runbook.interpret(ctx, hypothesis, check, result)
            for check, result in results
        ]

    async def synthesize(
        self, ctx: PlanningContext, tree: Tree, synthesis: Synthesis
    ) -> Synthesis:
        """The runbook's wording; the model's recommendations only for a cause it proposed.
        The primary and every confidence stay the aggregation's."""
        if not is_model_key(synthesis.primary.id):
            return await self._runbook.synthesize(ctx, tree, synthesis)
        try:
            worded = await self._model.synthesize(ctx, tree, synthesis)
        except LLMError as e:
            log.info("the model gave no usable recommendations: %s", e)
            return synthesis
        return synthesis.model_copy(
            update={
                "recommendations": worded.recommendations,
                "uncertainty_reason": worded.uncertainty_reason,
            }
        )


def is_model_key(key: str) -> bool:
    """Whether a hypothesis key names one the model proposed."""
    return key.startswith(MODEL_PREFIX)


def _tagged(plan: Plan) -> Plan:
    hypotheses = [
        h.model_copy(update={"key": (MODEL_PREFIX + h.key)[:_KEY_MAX], "children": []})
        for h in plan.hypotheses
    ]
    return plan.model_copy(update={"hypotheses": hypotheses})


def _untagged(hypothesis: HypothesisProposal) -> HypothesisProposal:
    return hypothesis.model_copy(update={"key": hypothesis.key.removeprefix(MODEL_PREFIX)})
