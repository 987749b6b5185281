"""Administration: accounts, audit trail, token usage, statistics, deep-analysis slots."""

from __future__ import annotations

import builtins
from contextlib import AbstractAsyncContextManager
from datetime import date, datetime
from typing import Protocol

from pydantic import BaseModel, Field

from reasoning_core.models import (
    Usage,
)
from reasoning_core.ports.accounts import User, UserStatus

# Implemented in storage/admin.py, storage/audit.py, storage/usage.py, storage/stats.py;
# used by the bot's access control, admin commands, rate limits and metrics.


class Account(User):
    """A user as admins see it: role and status plus the access details behind them."""

    allowed: bool = False  # on the allowlist (ACCESS_MODE=allowlist)
    ban_reason: str | None = None
    status_changed_at: datetime | None = None
    status_changed_by: int | None = None
    questions: int = 0  # exchanges, all time


class AuditEntry(BaseModel):
    """One admin action: who, what, where, with which arguments, and what came of it."""

    admin_id: int
    action: str
    args: str = ""
    outcome: str = ""
    chat_id: int | None = None
    id: int | None = None
    created_at: datetime | None = None


class UsageDay(BaseModel):
    """A user's token usage on one UTC day."""

    day: date
    usage: Usage

    @property
    def tokens(self) -> int:
        return self.usage.prompt_tokens + self.usage.completion_tokens


class StrategyStats(BaseModel):
    """Answers of one strategy within a stats window."""

    strategy: str
    questions: int
    mean_confidence: float | None = None
    below_threshold: int = 0  # confidence < UNCERTAINTY_THRESHOLD
    median_seconds: float | None = None
    p95_seconds: float | None = None


class Stats(BaseModel):
    """What /stats reports for the window since `since`."""

    since: datetime
    questions: int = 0
    below_threshold: int = 0
    strategies: list[StrategyStats] = Field(default_factory=list)
    clarifications_asked: int = 0
    clarifications_resumed: int = 0
    declines: int = 0
    trees: int = 0
    revisions: int = 0
    deep_jobs: dict[str, int] = Field(default_factory=dict)  # per status, created in the window
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    active_users: int = 0


class AccountStore(Protocol):
    """Roles, bans and the allowlist; a method given an unknown id returns None."""

    async def get(self, user_id: int) -> Account | None: ...

    async def page(self, *, offset: int, limit: int) -> builtins.list[Account]:
        """Users by last contact, newest first."""
        ...

    async def count(self) -> int: ...

    async def set_status(
        self, user_id: int, status: UserStatus, *, by: int, reason: str | None = None
    ) -> Account | None: ...

    async def set_allowed(self, user_id: int, allowed: bool, *, by: int) -> Account | None: ...


class AuditStore(Protocol):
    async def record(self, entry: AuditEntry) -> int:
        """Append one entry; returns its id."""
        ...

    async def recent(self, limit: int) -> builtins.list[AuditEntry]:
        """The newest entries first."""
        ...


class UsageStore(Protocol):
    """Token usage per user and UTC day, added up from every LLM call."""

    async def add(self, user_id: int, usage: Usage, *, day: date | None = None) -> None: ...

    async def on(self, user_id: int, day: date) -> Usage: ...

    async def recent(self, user_id: int, *, days: int) -> builtins.list[UsageDay]:
        """The last `days` days that have usage, newest first."""
        ...


class StatsStore(Protocol):
    async def ping(self) -> float:
        """Seconds one database round trip takes; raises `StoreError` when unreachable."""
        ...

    async def stats(self, since: datetime) -> Stats: ...

    async def deep_job_counts(self) -> dict[str, int]:
        """Deep-analysis jobs per status, all time."""
        ...


class DeepSlotLimiter(Protocol):
    """At most `limit` deep analyses per user at a time (MAX_CONCURRENT_DEEP_PER_USER).

    ``async with slots.slot(user_id) as acquired:`` -- `acquired` is False when the
    user already runs `limit` analyses; the slot is released when the block ends.
    """

    limit: int

    def slot(self, user_id: int) -> AbstractAsyncContextManager[bool]: ...
