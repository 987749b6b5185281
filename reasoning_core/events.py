"""Events: what the reasoning core tells a front end while it works.

A front end (Telegram, the terminal chat) renders them as live progress; the
last event of every run is either ``answer`` (carrying the `Answer`) or
``error`` followed by an ``answer`` explaining the failure.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from reasoning_core.models import Answer

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


class Event(BaseModel):
    kind: EventKind
    #: One human-readable line for progress displays.
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    answer: Answer | None = None
