"""Ports: the small Protocols through which the reasoning core reaches the world.

storage implements the store ports with asyncpg; reasoning_core/llm implements
`ChatModel` with the openai SDK; bot/app.py wires them together.
"""

from __future__ import annotations

import builtins
import secrets
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from reasoning_core.models import (
    ClarifyingQuestion,
    Evidence,
    Node,
    Strategy,
    StrategyDecision,
    Synthesis,
    Tree,
    Usage,
)
from reasoning_core.planning import CheckProposal, HypothesisProposal, Plan, PlanningContext
from reasoning_core.tools.base import ToolResult

# --- LLM ---------------------------------------------------------------------------

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str  # raw JSON text, as the model wrote it


class ChatMessage(BaseModel):
    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None


class ToolSpec(BaseModel):
    """A function offered to the model (OpenAI function-calling shape)."""

    name: str
    description: str
    parameters: dict[str, Any]


class Completion(BaseModel):
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None


class ChatModel(Protocol):
    """A chat-completion model. Raises only `LLMError` subclasses."""

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> Completion: ...


# --- users, sessions, exchanges ------------------------------------------------------

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


# --- pending clarifications ---------------------------------------------------------

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


# --- hypothesis trees ---------------------------------------------------------------


class TreeSummary(BaseModel):
    """One line of a tree listing: what was asked and where the analysis stands."""

    id: str
    task: str
    status: str
    primary_title: str | None = None
    confidence: float | None = None
    created_at: datetime


class TreeStore(Protocol):
    """Persistence of hypothesis trees; every change is written at once.

    Node ids are unique within their tree (not globally): nodes are keyed by
    (tree_id, id). Raises only `StoreError` subclasses.
    """

    async def create(self, tree: Tree) -> None:
        """Insert a new tree and the nodes it already has (normally just the root)."""
        ...

    async def save_node(self, node: Node) -> None:
        """Insert or update one node (its tree must exist, else NotFoundError)."""
        ...

    async def save_tree_meta(self, tree: Tree) -> None:
        """Update the tree's status, revision and synthesis (not its nodes)."""
        ...

    async def save_changes(self, tree: Tree, node_ids: Collection[str]) -> None:
        """Upsert the named nodes of `tree` and its meta in one transaction, in that order."""
        ...

    async def load(self, tree_id: str) -> Tree:
        """The tree with all its nodes in creation order; NotFoundError if unknown."""
        ...

    async def list(
        self, user_id: int | None = None, limit: int = 20
    ) -> builtins.list[TreeSummary]:
        """The newest trees first, of one user or of everyone (user_id None)."""
        ...


# --- planners ------------------------------------------------------------------------


class Planner(Protocol):
    """Proposes hypotheses and checks, reads tool results as evidence, words the synthesis.

    Implementations: the LLM planner and the runbook planner. See
    reasoning_core/planning.py for the call order. Raises `LLMError` (LLM planner)
    or `ReasoningError` subclasses; the explorer falls back or reports.
    """

    name: str  # "llm" or "runbook": the Answer says which planner produced it

    async def propose_hypotheses(self, ctx: PlanningContext) -> Plan: ...

    async def propose_checks(
        self, ctx: PlanningContext, hypothesis: HypothesisProposal
    ) -> list[CheckProposal]: ...

    async def interpret(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        check: CheckProposal,
        result: ToolResult,
    ) -> Evidence: ...

    async def synthesize(
        self, ctx: PlanningContext, tree: Tree, synthesis: Synthesis
    ) -> Synthesis: ...


# --- administration: accounts, audit trail, token usage, statistics (issue 8) ---------
# Implemented in storage/admin.py, storage/audit.py, storage/usage.py, storage/stats.py;
# used by the bot's access control, admin commands, rate limits and metrics.

from contextlib import AbstractAsyncContextManager  # noqa: E402 - this section's own imports
from datetime import date  # noqa: E402


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


# --- memory (long-term memory per user, chat and project) ---------------------------

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


# --- deep-analysis jobs (issue 4) ---------------------------------------------------
# Implemented in storage/jobs.py (PgJobStore); driven by reasoning_core/jobs.py.

from reasoning_core.models import Answer  # noqa: E402 - this section's own imports

JobStatus = Literal["queued", "running", "done", "failed"]


class Job(BaseModel):
    """One deep analysis as a durable job: queued -> running -> done | failed.

    A job left ``running`` with an old heartbeat belongs to a crashed process and
    is resumed from its tree (`tree_id`) by the next start-up.
    """

    id: int
    user_id: int
    chat_id: int
    question: str
    context: PlanningContext
    status: JobStatus = "queued"
    tree_id: str | None = None
    attempts: int = 0
    heartbeat_at: datetime | None = None
    answer: Answer | None = None
    error: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class JobStore(Protocol):
    """The ``deep_jobs`` queue. Times are the database's clock; raises `StoreError`."""

    async def enqueue(self, ctx: PlanningContext, *, user_id: int, chat_id: int) -> Job:
        """Queue a new job for this planning context."""
        ...

    async def claim(self, job_id: int | None = None) -> Job | None:
        """Take a queued job (that one, or the oldest) and mark it running: attempts + 1,
        heartbeat now. None when there is none or another worker holds it."""
        ...

    async def heartbeat(self, job_id: int) -> None:
        """The job's worker is alive (NotFoundError if the job does not exist)."""
        ...

    async def set_tree(self, job_id: int, tree_id: str) -> None:
        """Record the job's tree as soon as it exists, so a crash can resume it."""
        ...

    async def complete(self, job_id: int, answer: Answer) -> None:
        """Mark the job done with its answer."""
        ...

    async def fail(self, job_id: int, error: str) -> None:
        """Mark the job failed with a short, user-safe reason."""
        ...

    async def stale(self, *, older_than_sec: float, limit: int = 50) -> builtins.list[Job]:
        """Jobs whose worker is gone: running with a heartbeat older than `older_than_sec`,
        or still queued after that long; oldest first."""
        ...

    async def reclaim(self, job_id: int, *, older_than_sec: float) -> Job | None:
        """Atomically take over a stale job (running again, attempts + 1, heartbeat now);
        None when it is no longer stale (another process took it, or it finished)."""
        ...

    async def get(self, job_id: int) -> Job | None:
        """One job by id, or None."""
        ...
