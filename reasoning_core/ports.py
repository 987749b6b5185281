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
