"""Events: what the reasoning core tells a front end while it works, one model per kind.

A front end (Telegram, the terminal chat, the HTTP API) renders them as live
progress; the last event of every run is an `AnswerEvent` (carrying the
`Answer`), after an `ErrorEvent` when something failed. `Event` is the union of
all kinds, discriminated on ``kind`` (as pydantic-ai's stream events): a consumer
matches a class (``isinstance(event, StrategySelectedEvent)``) and reads its typed
fields, never string keys.

On the wire (the HTTP API's event stream, the analysis journal) an event is still
``kind``, ``message`` and a ``data`` object: `payload()` writes the fields its
producer set, under the same names as before the events were typed, so stored
journals and API clients read what they always read.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from reasoning_core.models import (
    Answer,
    ClarifyingQuestion,
    NodeStatus,
    NodeType,
    StrategyDecision,
    Synthesis,
)

EventKind = Literal[
    "strategy_selected",
    "reasoning_started",
    "reasoning",
    "reasoning_completed",
    "clarification_required",
    "tree_created",
    "node_added",
    "node_completed",
    "node_rejected",
    "reflection",
    "plan_revised",
    "synthesis",
    "answer",
    "error",
]


class BaseEvent(BaseModel):
    """What every event has: its kind and one human-readable line for progress displays."""

    kind: EventKind
    message: str = ""

    def payload(self) -> dict[str, Any]:
        """The wire's ``data`` object: the fields the producer set, JSON-ready.

        Only set fields, so an event carries on the wire exactly the keys it carried
        when events were a kind plus a dict (a queued job's ``reasoning`` has a
        ``job_id`` and nothing else).
        """
        # Set at the top level only: nested models (a synthesis, a question) go whole.
        return self.model_dump(mode="json", include=self.model_fields_set - {"kind", "message"})


class TreeStepEvent(BaseEvent):
    """A step of a deep analysis: the emitter adds the tree and its progress line."""

    tree_id: str | None = None
    progress: str | None = None


class StrategySelectedEvent(BaseEvent):
    """The strategy chosen for the question (quick, deep, clarify, decline)."""

    kind: Literal["strategy_selected"] = "strategy_selected"
    decision: StrategyDecision

    def payload(self) -> dict[str, Any]:
        """The decision's fields at the top level, as the wire always had them."""
        return self.decision.model_dump(mode="json")


class ReasoningStartedEvent(BaseEvent):
    """Work on the question began (`job_id`: the durable deep job that runs it)."""

    kind: Literal["reasoning_started"] = "reasoning_started"
    job_id: int | None = None


class ReasoningEvent(TreeStepEvent):
    """A step worth a progress line: memory read, a queued job, an analysis step."""

    kind: Literal["reasoning"] = "reasoning"
    #: Long-term memory entries that went into the answer's context (for metrics).
    memory_hits: int | None = None
    #: The deep job waiting for a worker.
    job_id: int | None = None
    #: The analysis stopped early (a budget, the deadline, a confident root).
    stopped: bool = False


class ReasoningCompletedEvent(BaseEvent):
    """The answer is ready; the `AnswerEvent` follows."""

    kind: Literal["reasoning_completed"] = "reasoning_completed"


class ClarificationRequiredEvent(BaseEvent):
    """The question needs the user's answers before it can be analysed."""

    kind: Literal["clarification_required"] = "clarification_required"
    clarification_id: str
    questions: list[ClarifyingQuestion] = Field(default_factory=list)


class TreeCreatedEvent(BaseEvent):
    """A hypothesis tree was created, or a saved one is continued (`resumed`)."""

    kind: Literal["tree_created"] = "tree_created"
    tree_id: str
    resumed: bool = False


class NodeAddedEvent(TreeStepEvent):
    """A hypothesis or a check joined the tree (`retry_of`: the check it runs again)."""

    kind: Literal["node_added"] = "node_added"
    node_id: str
    node_type: NodeType
    retry_of: str | None = None


class NodeCompletedEvent(TreeStepEvent):
    """A check has its evidence (no verdict: nothing to check was proposed)."""

    kind: Literal["node_completed"] = "node_completed"
    node_id: str
    verdict: Literal["confirmed", "refuted", "inconclusive"] | None = None
    confidence: float | None = None


class NodeRejectedEvent(TreeStepEvent):
    """A node was rejected or pruned, or a proposal was dropped before it became one."""

    kind: Literal["node_rejected"] = "node_rejected"
    node_id: str | None = None
    status: NodeStatus | None = None
    reason: str = ""
    #: A proposal refused before it became a node (no `node_id`).
    dropped: bool = False


class ReflectionEvent(TreeStepEvent):
    """A reflection checkpoint and what it decided (reflection_triggered_total counts it)."""

    kind: Literal["reflection"] = "reflection"
    triggers: list[str] = Field(default_factory=list)
    action: str
    reason: str = ""
    source: str = ""
    #: The checks to run again, as the reflection's `RetryPlan`s (JSON).
    retries: list[dict[str, Any]] = Field(default_factory=list)
    question: str | None = None
    critique: str | None = None
    checkpoints: list[str] = Field(default_factory=list)


class PlanRevisedEvent(TreeStepEvent):
    """The plan was revised (plan_revised_total counts it)."""

    kind: Literal["plan_revised"] = "plan_revised"
    revision: int
    previous_failure: str
    added: list[str] = Field(default_factory=list)
    set_aside: list[str] = Field(default_factory=list)


class SynthesisEvent(TreeStepEvent):
    """The analysis concluded: the primary cause and the ranking."""

    kind: Literal["synthesis"] = "synthesis"
    synthesis: Synthesis


class AnswerEvent(BaseEvent):
    """The last event of a run: the `Answer`.

    `goal` and `parameters` are what the answer was about (the recorder keeps them
    with the exchange); a front end reads only `answer`.
    """

    kind: Literal["answer"] = "answer"
    answer: Answer
    goal: str | None = None
    parameters: dict[str, Any] | None = None


class ErrorEvent(BaseEvent):
    """Something failed; an `AnswerEvent` explaining it follows."""

    kind: Literal["error"] = "error"
    tree_id: str | None = None
    #: The id the log keeps the failure under, shown to the user.
    error_id: str | None = None


Event = Annotated[
    StrategySelectedEvent
    | ReasoningStartedEvent
    | ReasoningEvent
    | ReasoningCompletedEvent
    | ClarificationRequiredEvent
    | TreeCreatedEvent
    | NodeAddedEvent
    | NodeCompletedEvent
    | NodeRejectedEvent
    | ReflectionEvent
    | PlanRevisedEvent
    | SynthesisEvent
    | AnswerEvent
    | ErrorEvent,
    Field(discriminator="kind"),
]

#: The steps of a deep analysis the explorer's emitter sends.
TreeStep = (
    ReasoningEvent
    | NodeAddedEvent
    | NodeCompletedEvent
    | NodeRejectedEvent
    | ReflectionEvent
    | PlanRevisedEvent
    | SynthesisEvent
)


def answer_of(event: Event) -> Answer | None:
    """The `Answer` an event carries: an `AnswerEvent`'s, None for every other kind."""
    return event.answer if isinstance(event, AnswerEvent) else None
