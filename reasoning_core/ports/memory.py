"""Long-term memory per user, chat and project."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, Field

from reasoning_core.models import (
    Strategy,
)
from reasoning_core.ports.accounts import Exchange
from reasoning_core.ports.clarifications import PendingClarification

DEFAULT_PROJECT = "default"


class MemoryEntry(BaseModel):
    """What the bot remembers of one completed answer: the goal, the outcome, the parameters.

    Keyed by (user_id, chat_id, project): in a private chat chat_id is the user's id;
    in a group each member has a memory of their own. `parameters` holds what a
    follow-up ("again, like yesterday") may reuse: cell ids, services, dates.
    """

    id: int | None = None  # set by the store
    user_id: int
    chat_id: int
    project: str = Field(default=DEFAULT_PROJECT, min_length=1, max_length=64)
    goal_summary: str
    outcome_summary: str = ""
    strategy: Strategy
    confidence: float = Field(ge=0.0, le=1.0)
    tree_id: str | None = None
    parameters: dict[str, str] = Field(default_factory=dict)
    created_at: datetime | None = None  # set by the store unless given


class MemoryStore(Protocol):
    """Long-term memory. Every read and delete is scoped to one owner; raises `StoreError`."""

    async def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Store an entry; returns it with id and created_at."""
        ...

    async def search(
        self, *, user_id: int, chat_id: int, project: str, query: str, top_k: int = 3
    ) -> builtins.list[MemoryEntry]:
        """The owner's entries best matching `query` (full-text rank, then newest);
        the newest entries when the query has no searchable words."""
        ...

    async def recent(
        self, *, user_id: int, chat_id: int, project: str, limit: int = 3
    ) -> builtins.list[MemoryEntry]:
        """The owner's newest entries, newest first."""
        ...

    async def list(
        self, *, user_id: int, chat_id: int, project: str, limit: int = 20, offset: int = 0
    ) -> builtins.list[MemoryEntry]:
        """A page of the owner's entries, newest first (for /memory)."""
        ...

    async def count(self, *, user_id: int, chat_id: int, project: str) -> int: ...

    async def delete(self, *, user_id: int, entry_id: int) -> bool:
        """Delete one entry if `user_id` owns it; False if there is no such entry of theirs."""
        ...

    async def forget_all(self, *, user_id: int, chat_id: int, project: str) -> int:
        """Delete every entry of the owner in this chat and project; returns how many."""
        ...

    async def purge_older_than(self, days: int) -> int:
        """Delete entries older than `days` days (MEMORY_TTL_DAYS); returns how many."""
        ...


class ProjectStore(Protocol):
    """The current project of a user in a chat (/project); "default" when never set."""

    async def get(self, *, user_id: int, chat_id: int) -> str: ...

    async def set(self, *, user_id: int, chat_id: int, project: str) -> None: ...


class TurnWriter(Protocol):
    async def write(self, exchange: Exchange | None, memory: MemoryEntry | None) -> None:
        """Store what one answered question leaves behind, in one round trip (all or nothing)."""
        ...


@dataclass(frozen=True, slots=True)
class TurnContext:
    """What answering in a chat starts from: the project, the open session, its history,
    and the clarifying question waiting for an answer (if any)."""

    project: str
    session_id: int
    history: list[Exchange]
    pending: PendingClarification | None = None
    #: Long-term memory searched for the `memory_query` asked (None: not asked).
    memories: list[MemoryEntry] | None = None


class TurnContextStore(Protocol):
    async def load(
        self,
        *,
        user_id: int,
        chat_id: int,
        history_limit: int,
        now: datetime,
        memory_query: str | None = None,
        memory_top_k: int = 0,
    ) -> TurnContext | None:
        """Project, open session (opened if none), its last exchanges (oldest first), the
        open clarification (open at `now`) and, with a `memory_query`, the project's
        `memory_top_k` memory entries best matching it, in one round trip; None when that
        cannot be had at once (the separate reads then)."""
        ...
