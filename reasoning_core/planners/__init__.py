"""Planners: the two brains behind the `Planner` port (ports/planner.py).

``contract`` holds what a planner proposes and what the explorer gives it
(`PlanningContext`, `Plan`, `HypothesisProposal`, `CheckProposal`). ``llm/`` is
the planner over a chat model, with matching runbooks as guidance; ``runbook/``
plans from YAML runbooks with no model, and is the LLM planner's fallback.
"""

from reasoning_core.planners.contract import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)

__all__ = ["CheckProposal", "HypothesisProposal", "Plan", "PlanningContext"]
