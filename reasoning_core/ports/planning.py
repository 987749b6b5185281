"""What a planner proposes and what the explorer gives it: the Planner port's models.

Two brains sit behind one `Planner` port (ports/planner.py): the LLM
planner and the runbook planner. The explorer drives either one the same way:

1. `propose_hypotheses(ctx)` -> a `Plan`: competing hypotheses, or a
   `conclusion` when there is nothing to investigate (e.g. "no drop found").
   A hypothesis may carry `children` (alternatives); they become its
   sub-hypotheses at once and get the checks (step 2) instead of it.
2. `propose_checks(ctx, hypothesis)` -> checks, each a tool request.
3. the explorer runs the checks through the tools, concurrently;
4. `interpret(ctx, hypothesis, check, result)` -> `Evidence`; a planner that asks
   a model for it also offers `interpret_checks` (the `BatchInterpreter` port): one
   call for all of a hypothesis's results;
5. a planner that knows what findings wait on (the `LinkFollower` port) is asked,
   for each confirmed hypothesis, `propose_links(ctx, hypothesis, findings)`: the
   "because" hypotheses its evidence names (a `HypothesisProposal` with a `link`),
   grown under it with checks of their own (steps 2-4), up to `Budgets.max_links`;
6. `synthesize(ctx, tree, synthesis)` -> the synthesis with recommendations
   and wording added (the numbers come from aggregation, not from the planner).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from reasoning_core.models import Evidence
from reasoning_core.tools.base import ToolRequest
from reasoning_core.understanding.parse import understand
from reasoning_core.understanding.request import Request

#: The key prefix of a hypothesis a language model proposed beside a runbook's
#: (planners/runbook_first.py); the report says which parts came from the model.
MODEL_KEY_PREFIX = "llm_"
#: Separates a "because" link's key from its parent's ("lock_contention>holder_io").
LINK_KEY_SEP = ">"


class LinkNote(BaseModel):
    """What makes a hypothesis a "because" link of its parent, and what to say of it."""

    #: The parent's finding that named the link ("pid 4242 waits on IO WALSync").
    because: str = Field(default="", max_length=300)
    #: Said when the link cannot be checked here ("the disk is not measured here: ...").
    unmeasured: str = Field(default="", max_length=500)
    #: What to do about it, said when it is the deepest confirmed link.
    recommendations: list[str] = Field(default_factory=list, max_length=6)
    #: Parameters of its checks bound from the finding (a planner's own use).
    params: dict[str, str] = Field(default_factory=dict)
    #: False: the parent stands as the cause when this link is refuted or cannot be
    #: checked (only a confirmed link goes deeper); True: an open link keeps it an effect.
    required: bool = True


class HypothesisProposal(BaseModel):
    """A candidate cause. `key` is stable across runs (e.g. "technical")."""

    key: str = Field(min_length=1, max_length=64)
    title: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=1000)
    prior: float = Field(default=0.5, ge=0.01, le=0.99)
    confirm_if: str = Field(default="", max_length=500)
    refute_if: str = Field(default="", max_length=500)
    #: Alternatives ("an outage OR interference"): added under this hypothesis as
    #: sub-hypotheses at once, so aggregation combines them by noisy-OR; checks are
    #: then asked for the children (the leaves), not for this hypothesis.
    children: list[HypothesisProposal] = Field(default_factory=list, max_length=10)
    #: The highest p its evidence may give it (aggregation clamps to it). Below 1 for a
    #: hypothesis whose checks only a language model reads beside a runbook's: no verdict
    #: rule backs its readings, so it stays a candidate (planners/runbook_first.py).
    ceiling: float = Field(default=1.0, ge=0.01, le=1.0)
    #: Set on a "because" link: a hypothesis about what its parent's finding waits on or
    #: comes from. Its p does not feed its parent's; the report reads the chain.
    link: LinkNote | None = None


class CheckProposal(BaseModel):
    """One verifiable check: which tool, with which request, and why."""

    key: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=500)
    tool: str = Field(min_length=1, max_length=32)
    request: ToolRequest
    #: Expected information gain (0..1) and relative cost, for best-first ordering.
    gain: float = Field(default=0.5, ge=0.0, le=1.0)
    cost: float = Field(default=1.0, gt=0.0)
    #: Planner-private details (e.g. the runbook's verdict rule) carried to `interpret`.
    extra: dict[str, Any] = Field(default_factory=dict)


class Plan(BaseModel):
    hypotheses: list[HypothesisProposal] = Field(default_factory=list)
    #: Set when there is nothing to investigate; the answer then has primary id "none".
    conclusion: Evidence | None = None
    #: Parameters the planner resolved (entities, time window), for the report.
    parameters: dict[str, Any] = Field(default_factory=dict)


class PlanningContext(BaseModel):
    """Everything a planner may use to plan one analysis."""

    question: str
    goal: str
    language: str = "en"
    user_id: int | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    #: "the previous attempt failed because ..." on a plan revision.
    previous_failure: str | None = None
    #: Hypothesis keys already tried; a revision must not propose them again.
    excluded_hypotheses: list[str] = Field(default_factory=list)
    #: Matching runbooks' text, given to the LLM planner as guidance.
    guidance: str | None = None
    #: "Previously for this user/project" lines from long-term memory.
    memory: list[str] = Field(default_factory=list)
    #: The goal, parsed once (understanding); None in contexts saved before it existed.
    request: Request | None = None
    #: The runbook chosen for this analysis (an alert mapping names it); None: the planner
    #: matches the question against the runbooks.
    runbook: str | None = None

    def parsed(self) -> Request:
        """The parsed goal (parsed now, without the data's names, if it was not before)."""
        return self.request if self.request is not None else understand(self.goal or self.question)
