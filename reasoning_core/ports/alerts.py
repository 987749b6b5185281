"""Alert analyses: what Alertmanager asked us to investigate, deduplicated and durable."""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from reasoning_core.models import Answer

# Implemented in storage/alerts.py (PgAlertStore); driven by bot/alerts/.

AlertAnalysisStatus = Literal["queued", "running", "posted", "failed"]
#: What a firing alert did: started an analysis, joined an open one (same runbook and
#: parameters), or was a repeat of an alert already being handled.
FiringOutcome = Literal["started", "joined", "duplicate"]


class PostedMessage(BaseModel):
    chat_id: int
    message_id: int


class AlertCondition(BaseModel):
    """What fired: the rule's expression and the alert's labels (which of its result series
    is this alert's), re-read as the analysis's symptom (asking/condition.py)."""

    alertname: str = Field(default="", max_length=200)
    expression: str = Field(min_length=1, max_length=16_384)
    labels: dict[str, str] = Field(default_factory=dict)


class NewAlertAnalysis(BaseModel):
    """An analysis as the receiver asks for it."""

    #: runbook + parameters (or "unmapped:" + fingerprint): one open analysis per key.
    dedup_key: str = Field(min_length=1, max_length=2000)
    alertname: str = Field(max_length=200)
    #: None: there is no runbook for the alert; `question` is then the note to post.
    runbook: str | None = None
    parameters: dict[str, str] = Field(default_factory=dict)
    question: str
    language: Literal["en", "ru"] = "en"
    chats: list[int] = Field(min_length=1)
    #: The first line of the report (the alert and its labels, as HTML); the report
    #: posted becomes the header a resolved notification edits.
    report_html: str | None = None
    #: The labels that identify the group (alertname + the mapping's keys): a silence's
    #: equality matchers, never wider than this analysis.
    matchers: dict[str, str] = Field(default_factory=dict)
    #: The rule's expression that fired and the alert's labels (None: no expression known).
    condition: AlertCondition | None = None


class AlertAnalysis(NewAlertAnalysis):
    """A stored analysis: queued -> running -> posted | failed; resolved when all its
    alerts are."""

    id: int
    status: AlertAnalysisStatus = "queued"
    attempts: int = 0
    answer: Answer | None = None
    messages: list[PostedMessage] = Field(default_factory=list)
    resolved_at: datetime | None = None
    resolved_posted: bool = False
    #: "Investigate again" was pressed in this chat: the new report goes there only.
    again_chat: int | None = None
    #: How many times "Investigate again" queued it (0: the first investigation).
    round: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    #: The earliest `startsAt` of its alerts (Alertmanager's): when the symptom began.
    started_at: datetime | None = None


class AlertStore(Protocol):
    """The ``alert_analyses`` queue and ``alert_fingerprints``; raises `StoreError`."""

    async def record_firing(
        self, fingerprint: str, *, starts_at: datetime | None, analysis: NewAlertAnalysis
    ) -> tuple[FiringOutcome, int]:
        """One firing alert, atomically: a repeat of an unresolved fingerprint is a
        duplicate; else it joins the open analysis with the same key or starts one.
        Returns the outcome and the analysis id."""
        ...

    async def record_resolved(
        self, fingerprint: str, *, ends_at: datetime
    ) -> AlertAnalysis | None:
        """Mark the alert resolved; the analysis when this was its last firing alert."""
        ...

    async def queued(self) -> int:
        """Analyses not yet posted (queued or running): the receiver's back-pressure."""
        ...

    async def claim(self, *, stale_after_sec: float) -> AlertAnalysis | None:
        """Take the oldest queued analysis (or one whose worker died) and mark it running."""
        ...

    async def heartbeat(self, analysis_id: int) -> None: ...

    async def hand_back(self, analysis_id: int) -> None:
        """Queued again, claimable by any process at once: this one stops before it could
        finish (the claim is not counted)."""
        ...

    async def posted(
        self,
        analysis_id: int,
        *,
        answer: Answer | None,
        report_html: str,
        messages: builtins.list[PostedMessage],
    ) -> AlertAnalysis:
        """The report is in the chats; returns the row (resolved meanwhile?)."""
        ...

    async def failed(self, analysis_id: int, error: str) -> None: ...

    async def take_resolved_edit(self, analysis_id: int) -> bool:
        """True once per analysis: the caller edits the posted report as resolved."""
        ...

    async def counts(self) -> dict[str, int]:
        """Analyses by status, and ``fingerprints``: for benchmarks and metrics."""
        ...


AlertActionKind = Literal["silence", "ack"]
AlertActionState = Literal["pending", "active", "expired"]


class AlertAction(BaseModel):
    """A silence whytree made in Alertmanager, or an acknowledgement, in one chat."""

    id: int
    analysis_id: int | None
    chat_id: int
    kind: AlertActionKind
    state: AlertActionState
    user_id: int
    user_name: str
    silence_id: str | None = None
    matchers: dict[str, str] = Field(default_factory=dict)
    ends_at: datetime | None = None
    created_at: datetime | None = None


class AlertActionStore(Protocol):
    """``alert_actions`` and the reads of ``alert_analyses`` the chat's buttons need."""

    async def analysis(self, analysis_id: int) -> AlertAnalysis | None: ...

    async def firing_in_chat(self, chat_id: int) -> builtins.list[AlertAnalysis]:
        """Unresolved analyses routed to this chat (its routes only)."""
        ...

    async def claim_silence(
        self,
        *,
        analysis_id: int | None,
        chat_id: int,
        user_id: int,
        user_name: str,
        matchers: dict[str, str],
        ends_at: datetime,
    ) -> tuple[AlertAction, bool]:
        """A pending silence row, or (the existing pending/active one, False)."""
        ...

    async def activate_silence(self, action_id: int, silence_id: str) -> AlertAction: ...

    async def drop_pending(self, action_id: int) -> None:
        """Alertmanager refused: the pending row goes (nothing is recorded)."""
        ...

    async def acknowledge(
        self, *, analysis_id: int, chat_id: int, user_id: int, user_name: str
    ) -> tuple[AlertAction, bool]:
        """The acknowledgement, and whether it is new (False: someone was first)."""
        ...

    async def actions(self, chat_id: int) -> builtins.list[AlertAction]:
        """Pending and active rows of the chat, oldest first."""
        ...

    async def action(self, action_id: int) -> AlertAction | None: ...

    async def investigate_again(self, analysis_id: int, chat_id: int) -> bool:
        """Queue a posted (or failed) unresolved analysis again, its new report for
        `chat_id` only; False if it is running."""
        ...

    async def expire(self, action_id: int) -> bool:
        """Mark a silence expired; False if it already was."""
        ...
