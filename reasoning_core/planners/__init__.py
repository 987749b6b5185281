"""Planners: the two brains behind the `Planner` port (ports/planner.py).

What a planner proposes and what the explorer gives it (`PlanningContext`, `Plan`,
`HypothesisProposal`, `CheckProposal`) is the port's contract, in ports/planning.py,
re-exported here. ``llm/`` is
the planner over a chat model, with matching runbooks as guidance; ``runbook/``
plans from YAML runbooks with no model, and is the LLM planner's fallback;
``runbook_first`` is what runs with a model configured: the runbooks plan, check and
judge, and the model only adds (hypotheses on a revision, the reading of its own checks).
The model's side is ``llm/`` or, with ``LLM_PLANNER=agent``, ``agent/``: a model that
calls tools grows the tree itself with the tree tool, one bounded session per step.
"""

from reasoning_core.ports.planning import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)

__all__ = ["CheckProposal", "HypothesisProposal", "Plan", "PlanningContext"]
