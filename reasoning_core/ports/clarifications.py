"""Pending clarifications: clarify decisions waiting for the user's answers."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from reasoning_core.models import (
    ClarifyingQuestion,
    StrategyDecision,
)

ClarificationStatus = Literal["active", "answered", "cancelled", "superseded"]

#: What `new_clarification_id` produces; also what callback-data parsers may accept.
CLARIFICATION_ID_PATTERN = r"^[A-Za-z0-9_-]{8,12}$"


def new_clarification_id() -> str:
    """11 url-safe characters (64 random bits): unguessable, yet short for callback data."""
    return secrets.token_urlsafe(8)


def _utcnow() -> datetime:
    return datetime.now(UTC)


class PendingClarification(BaseModel):
    """A clarify decision waiting for the user's answers, stored so it survives a restart.

    ``answers[i]`` answers ``questions[i]``; a later round appends its questions, so
    the question to ask next is ``questions[len(answers)]`` (`next_question`).
    Times are the application's clock, timezone-aware UTC.
    """

    id: str = Field(default_factory=new_clarification_id, pattern=CLARIFICATION_ID_PATTERN)
    chat_id: int
    user_id: int
    question: str  # the user's original text
    decision: StrategyDecision
    questions: list[ClarifyingQuestion] = Field(default_factory=list)
    answers: list[str] = Field(default_factory=list)
    round: int = Field(default=1, ge=1)
    created_at: datetime = Field(default_factory=_utcnow)
    expires_at: datetime
    status: ClarificationStatus = "active"
    closed_at: datetime | None = None

    @property
    def next_question(self) -> ClarifyingQuestion | None:
        """The first unanswered question, or None when every question has an answer."""
        index = len(self.answers)
        return self.questions[index] if index < len(self.questions) else None

    def is_open(self, now: datetime | None = None) -> bool:
        """Still waiting for answers: active and not expired at `now` (default: now, UTC)."""
        return self.status == "active" and self.expires_at > (now or _utcnow())


class ClarificationStore(Protocol):
    """Pending clarifications: at most one active per chat and user, the newest wins.

    Expiry uses the application's clock: each ``now`` parameter defaults to
    ``datetime.now(UTC)`` and is compared with ``expires_at``, which the caller set
    from the same clock (created_at + CLARIFICATION_TTL_SEC). Tests pass ``now``.
    """

    async def save(self, pending: PendingClarification) -> None:
        """Store a new active clarification; any older active one for this chat and user
        becomes ``superseded``."""
        ...

    async def active(
        self, chat_id: int, user_id: int, *, now: datetime | None = None
    ) -> PendingClarification | None:
        """The open (active, not expired) clarification of this user in this chat."""
        ...

    async def get(self, clarification_id: str) -> PendingClarification | None:
        """Any stored clarification by id, whatever its status (check `is_open`)."""
        ...

    async def add_answer(
        self, clarification_id: str, answer: str, *, now: datetime | None = None
    ) -> PendingClarification:
        """Append an answer atomically; `NotFoundError` if unknown, closed or expired."""
        ...

    async def next_round(
        self,
        clarification_id: str,
        *,
        decision: StrategyDecision,
        questions: Sequence[ClarifyingQuestion],
        expires_at: datetime | None = None,
        now: datetime | None = None,
    ) -> PendingClarification:
        """Start another round: round + 1, the new decision, its questions appended,
        answers kept; `NotFoundError` if unknown, closed or expired."""
        ...

    async def close(self, clarification_id: str) -> None:
        """Mark it answered (idempotent); `NotFoundError` if the id is unknown."""
        ...

    async def cancel(self, chat_id: int, user_id: int, *, now: datetime | None = None) -> bool:
        """Cancel the open clarification of this user in this chat (/cancel);
        True if one was open."""
        ...
