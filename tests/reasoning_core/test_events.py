"""Typed events: one model per kind, discriminated on ``kind``; the wire keeps its shape."""

from __future__ import annotations

from pydantic import TypeAdapter

from reasoning_core.events import (
    AnswerEvent,
    ClarificationRequiredEvent,
    ErrorEvent,
    Event,
    NodeAddedEvent,
    ReasoningEvent,
    ReasoningStartedEvent,
    StrategySelectedEvent,
    answer_of,
)
from reasoning_core.models import Answer, ClarifyingQuestion, StrategyDecision

EVENTS: TypeAdapter[Event] = TypeAdapter(Event)


def test_the_kind_picks_the_model() -> None:
    event = EVENTS.validate_python(
        {"kind": "node_added", "message": "Check c1", "node_id": "c1", "node_type": "verification"}
    )
    assert isinstance(event, NodeAddedEvent) and event.node_type == "verification"
    started = EVENTS.validate_json('{"kind": "reasoning_started", "job_id": 4}')
    assert isinstance(started, ReasoningStartedEvent) and started.job_id == 4


def test_the_payload_is_the_data_object_clients_always_read() -> None:
    decision = StrategyDecision(strategy="deep", confidence=0.8, reason="a cause to find")
    # strategy_selected: the decision's fields at the top level, as before
    assert StrategySelectedEvent(decision=decision).payload() == decision.model_dump(mode="json")
    # only the fields the producer set: a queued job says its id and nothing else
    assert ReasoningEvent(job_id=7).payload() == {"job_id": 7}
    assert ReasoningEvent(memory_hits=0).payload() == {"memory_hits": 0}
    # a None the producer set is still there (the tree of a failure before any tree)
    assert ErrorEvent(message="boom", tree_id=None).payload() == {"tree_id": None}
    asked = ClarificationRequiredEvent(
        clarification_id="c-1", questions=[ClarifyingQuestion(text="Which cell?")]
    )
    assert asked.payload() == {
        "clarification_id": "c-1",
        "questions": [{"text": "Which cell?", "options": [], "asks": None}],
    }
    # an emitter step carries its tree and progress line
    step = NodeAddedEvent(node_id="h1", node_type="hypothesis").model_copy(
        update={"message": "Hypothesis h1", "tree_id": "t1", "progress": "0/0 checks"}
    )
    assert step.payload() == {
        "tree_id": "t1",
        "progress": "0/0 checks",
        "node_id": "h1",
        "node_type": "hypothesis",
    }


def test_answer_of_reads_only_the_answer_event() -> None:
    answer = Answer(strategy="quick", text="because", confidence=0.9)
    assert answer_of(AnswerEvent(answer=answer)) == answer
    assert answer_of(ReasoningEvent()) is None
