"""Contracts shared by every layer: pydantic models, no I/O.

See ARCHITECTURE.md, "Contracts". Every path (quick, deep, clarify, decline)
ends in the same `Answer` shape.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: The languages questions, reports and replies come in.
Language = Literal["en", "ru"]


def as_language(value: str | None) -> Language:
    """A language tag as one of ours: "ru" stays Russian, anything else is English."""
    return "ru" if value == "ru" else "en"


Strategy = Literal["quick", "deep", "clarify", "decline"]
STRATEGIES: tuple[Strategy, ...] = ("quick", "deep", "clarify", "decline")
DecisionSource = Literal["llm", "heuristic", "cache"]

#: Below this confidence every answer must say why it is unsure.
UNCERTAINTY_THRESHOLD = 0.7
#: How sure a report is of a cause only a new log line names (no check confirms it): below
#: "medium" (0.5), however telling the line.
LOG_LEAD_CONFIDENCE = 0.35


class ConfidenceLevel(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


def confidence_level(confidence: float) -> ConfidenceLevel:
    """high >= 0.8, medium >= 0.5, low below."""
    if confidence >= 0.8:  # noqa: PLR2004 - the documented band edges
        return ConfidenceLevel.HIGH
    if confidence >= 0.5:  # noqa: PLR2004
        return ConfidenceLevel.MEDIUM
    return ConfidenceLevel.LOW


class ClarifyingQuestion(BaseModel):
    """One question for the user, with up to four suggested answers."""

    text: str = Field(min_length=1, max_length=300)
    options: list[str] = Field(default_factory=list, max_length=4)
    #: What it asks for: an entity kind ("cell", "service"), "period", "subject", "symptom".
    asks: str | None = None

    @field_validator("options")
    @classmethod
    def _short_options(cls, options: list[str]) -> list[str]:
        return [o.strip()[:60] for o in options if o.strip()]


class StrategyDecision(BaseModel):
    """How hard to think about one question, and how sure we are of that choice."""

    strategy: Strategy
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str = Field(max_length=500)
    uncertainty_reason: str | None = Field(default=None, max_length=500)
    restated_goal: str = Field(default="", max_length=1000)
    language: str = Field(default="en", max_length=8)
    questions: list[ClarifyingQuestion] = Field(default_factory=list, max_length=3)
    source: DecisionSource = "heuristic"


class Usage(BaseModel):
    """Token usage reported by the LLM server, summed over calls."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            llm_calls=self.llm_calls + other.llm_calls,
        )


# --- hypothesis tree -------------------------------------------------------------

NodeType = Literal["root", "hypothesis", "verification", "leaf"]
NodeStatus = Literal["pending", "in_progress", "completed", "rejected", "pruned"]


class Evidence(BaseModel):
    """What one check found: confirmed True / False / None (inconclusive) with a strength."""

    confirmed: bool | None
    confidence: float = Field(ge=0.0, le=1.0)
    text: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    #: Backed by tool numbers? A judgement without data is capped at 0.5.
    has_data: bool = False


class Node(BaseModel):
    id: str
    tree_id: str
    parent_id: str | None = None
    node_type: NodeType
    status: NodeStatus = "pending"
    title: str = ""
    description: str = ""
    depth: int = 0
    prior: float = Field(default=0.5, ge=0.0, le=1.0)
    promise: float = Field(default=0.5, ge=0.0)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    result: Evidence | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    rejection_reason: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class RankedHypothesis(BaseModel):
    id: str
    node_id: str | None = None
    title: str
    confidence: float = Field(ge=0.0, le=1.0)


class Synthesis(BaseModel):
    """The conclusion of a deep analysis."""

    primary: RankedHypothesis
    confidence: float = Field(ge=0.0, le=1.0)
    margin: float = Field(default=1.0, ge=0.0, le=1.0)
    ranking: list[RankedHypothesis] = Field(default_factory=list)
    secondary: list[RankedHypothesis] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    recommendations: list[str] = Field(default_factory=list)
    uncertainty_reason: str | None = None
    not_established: bool = False
    #: The primary stands only by elimination (its rivals refuted, or a part merely there):
    #: no confirmed check measures what it blames; reported as possible, below "established".
    by_elimination: bool = False
    #: A runner-up within the close margin: two causes fit about equally.
    rival: RankedHypothesis | None = None
    #: What would confirm the primary (by elimination) or tell it from its rival.
    would_settle: list[str] = Field(default_factory=list)
    #: What the analysis measured of the symptom (tree/symptom.py), for the report's first line.
    symptom: dict[str, Any] | None = None
    #: The title (by language) of the runbook that planned the analysis (tree/checked_by.py).
    runbook_title: dict[str, str] | None = None
    #: What changed around the subject when no cause was established (the change scan,
    #: reasoning_core/changes), in the report's language: where to look next, never a cause.
    changed: str | None = None
    #: What is new in the logs since the incident began (reasoning_core/logs/news.py): the
    #: lines an engineer reads first, quoted with their counts; None when not looked at.
    log_news: str | None = None
    #: The new error written most often in the logs, quoted, when no check established a
    #: cause: the report opens with it as a possible cause at `LOG_LEAD_CONFIDENCE`.
    log_lead: str | None = None
    #: How the new log lines bear on the primary cause (reasoning_core/logs/bearing.py):
    #: the lines of the part it blames that agree, or the new errors elsewhere, quoted.
    log_bearing: list[str] = Field(default_factory=list)
    #: The "because" chain the primary cause was followed down (tree/chain.py), effect
    #: first; the primary is its deepest confirmed link. Empty: no link was grown.
    chain: list[str] = Field(default_factory=list)
    #: The chain ends at a link that could not be checked: the cause is still open.
    chain_open: bool = False
    #: The reply to the question's form, said before the report (answers/reply_to.py):
    #: "Yes — …", "No — …", "Not established — …", an either-or's side; None: none asked.
    reply: str | None = None


class Tree(BaseModel):
    id: str
    task: str
    user_id: int | None = None
    chat_id: int | None = None
    status: Literal["active", "completed", "failed"] = "active"
    revision: int = 0
    nodes: dict[str, Node] = Field(default_factory=dict)
    synthesis: Synthesis | None = None
    created_at: datetime | None = None


# --- one question, one answer ------------------------------------------------------


class Question(BaseModel):
    """A question as the reasoning core receives it, whatever the front end."""

    model_config = ConfigDict(frozen=True)

    text: str
    user_id: int
    chat_id: int
    session_id: int | None = None
    project: str = "default"
    #: The front end's id of this question (a Telegram update): asked again with the same
    #: key after a crash, a deep analysis continues rather than starts over.
    key: str | None = None


class ClarificationPrompt(BaseModel):
    """The clarifying question a front end should show now (one at a time)."""

    clarification_id: str
    index: int = Field(ge=0)
    total: int = Field(ge=1)
    round: int = Field(ge=1)
    text: str
    options: list[str] = Field(default_factory=list)


class AnswerChart(BaseModel):
    """The chart of an answer that has no tree (the change scan's candidates): the symptom's
    series on top and the evidence's below it on the same time axis, each as
    `runbooks.series.chart_series` keeps one (`{"t": [...], "v": [...], "label": ...}`)."""

    title: str
    symptom: dict[str, Any]
    evidence: dict[str, Any] | None = None
    onset: datetime | None = None


class Answer(BaseModel):
    """The reply to one question, the same shape whichever path produced it."""

    strategy: Strategy
    text: str
    confidence: float = Field(ge=0.0, le=1.0)
    uncertainty_reason: str | None = None
    reason: str = ""
    tree_id: str | None = None
    synthesis: Synthesis | None = None
    decision: StrategyDecision | None = None
    planner: str | None = None
    #: Set when strategy is "clarify": the question to ask now, with its options.
    clarification: ClarificationPrompt | None = None
    #: What the answer assumed after the clarification rounds ran out.
    assumptions: list[str] = Field(default_factory=list)
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    #: The language the answer is worded in (the question's): front ends word their own
    #: parts of the reply (labels, hints, buttons) in it too.
    language: Language = "en"
    #: The chart of an answer without a tree (a tree's chart is drawn from the tree).
    chart: AnswerChart | None = None
