"""Users, sessions and exchanges (one question and its answer)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from reasoning_core.models import (
    Strategy,
    Usage,
)

Role_ = Literal["user", "admin"]
UserStatus = Literal["active", "banned"]


class User(BaseModel):
    id: int  # the Telegram user id; 0 is the local terminal user
    username: str | None = None
    full_name: str | None = None
    role: Role_ = "user"
    status: UserStatus = "active"
    created_at: datetime | None = None
    last_seen_at: datetime | None = None


class Exchange(BaseModel):
    """One question and its answer, as stored in the messages table."""

    session_id: int
    user_id: int
    chat_id: int
    question: str
    answer: str
    strategy: Strategy
    confidence: float
    uncertainty_reason: str | None = None
    tree_id: str | None = None
    started_at: datetime
    finished_at: datetime
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None


class UserStore(Protocol):
    async def touch(
        self, user_id: int, *, username: str | None = None, full_name: str | None = None
    ) -> User:
        """Create the user on first sight, refresh names and last_seen_at otherwise."""
        ...


class SessionStore(Protocol):
    async def current(self, *, user_id: int, chat_id: int) -> int:
        """The open session of this user in this chat, created if there is none."""
        ...

    async def start_new(self, *, user_id: int, chat_id: int) -> int:
        """Close the open session (if any) and open a new one."""
        ...


class ExchangeStore(Protocol):
    async def record(self, exchange: Exchange) -> int:
        """Persist one exchange; returns its id."""
        ...

    async def recent(self, *, session_id: int, limit: int = 10) -> list[Exchange]:
        """The last `limit` exchanges of a session, oldest first."""
        ...
