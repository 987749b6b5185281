"""One turn's context (project, session, recent history) and its record afterwards.

Both sides tolerate a database outage: the user still gets an answer, only
without history or without it being stored, and the operator gets a log line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from pydantic import ValidationError

from reasoning_core.errors import StoreError
from reasoning_core.memory.budget import select_session_history
from reasoning_core.memory.long_term import LongTermMemory
from reasoning_core.models import Answer, Question
from reasoning_core.ports import (
    DEFAULT_PROJECT,
    Exchange,
    ExchangeStore,
    MemoryEntry,
    PendingClarification,
    ProjectStore,
    SessionStore,
    TurnContextStore,
    TurnWriter,
)
from reasoning_core.understanding.catalogue import KnownNames
from reasoning_core.understanding.parse import understand
from reasoning_core.understanding.request import Request

log = logging.getLogger(__name__)

#: History questions whose names the strategy reads ("what you asked about lately").
RECENT_PARSED = 3


@dataclass(frozen=True, kw_only=True)
class SessionLimits:
    """How much of the session goes into prompts (SESSION_TTL_SEC, SESSION_MAX_*)."""

    ttl_sec: int = 24 * 3600
    max_exchanges: int = 6
    max_chars: int = 6000


@dataclass(frozen=True)
class Turn:
    question: Question  # with the user's current project filled in
    session_id: int | None
    history: list[Exchange] = field(default_factory=list)
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    #: The open clarification, when it was read with the rest (else look it up).
    pending: PendingClarification | None = None
    pending_known: bool = False
    #: Long-term memory searched for `memories_for` with the rest (else search then).
    memories: list[MemoryEntry] | None = None
    memories_for: str | None = None
    #: The question parsed once (understanding), against the data's names: every later
    #: step reads it, never the text again. Set by the service (`parsed`).
    request: Request | None = None
    #: The last few history questions parsed once, as typed (no names linked): the
    #: names the user spoke of lately, which clarifying questions offer back.
    recent: tuple[Request, ...] = ()
    #: The previous question parsed once against the same names as `request`: what a
    #: follow-up ("why is it dropping") may be about.
    previous: Request | None = None

    def parsed(self, request: Request, known: KnownNames) -> Turn:
        """This turn carrying the question's parse and its history's, each parsed once."""
        recent = tuple(understand(past.question) for past in self.history[-RECENT_PARSED:])
        last = self.history[-1].question if self.history else None
        previous = understand(last, known) if last is not None else None
        return replace(self, request=request, recent=recent, previous=previous)


class TurnLoader:
    def __init__(
        self,
        *,
        sessions: SessionStore,
        exchanges: ExchangeStore,
        projects: ProjectStore,
        limits: SessionLimits,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        context: TurnContextStore | None = None,
        memory_top_k: int = 0,
    ) -> None:
        self._context = context
        #: Memory entries read with the context (0: none; memory is off).
        self._memory_top_k = memory_top_k
        self._sessions = sessions
        self._exchanges = exchanges
        self._projects = projects
        self._limits = limits
        self._clock = clock

    async def load(self, question: Question, *, memory_query: str | None = None) -> Turn:
        """Project, session and history: in one round trip with a `TurnContextStore`,
        which also searches memory for `memory_query` then."""
        if question.session_id is None and (
            turn := await self._load_at_once(question, memory_query)
        ):
            return turn
        project = await self._project(question)
        question = question.model_copy(update={"project": project})
        session_id = await self._session_id(question)
        return Turn(question, session_id, await self._history(session_id), self._clock())

    async def _load_at_once(self, question: Question, memory_query: str | None) -> Turn | None:
        if self._context is None:
            return None
        if self._memory_top_k <= 0:
            memory_query = None
        try:
            context = await self._context.load(
                user_id=question.user_id,
                chat_id=question.chat_id,
                history_limit=self._limits.max_exchanges,
                now=self._clock(),
                memory_query=memory_query,
                memory_top_k=self._memory_top_k,
            )
        except StoreError as e:
            log.warning("turn context lookup failed, reading it piece by piece: %s", e)
            return None
        if context is None:
            return None
        question = question.model_copy(update={"project": context.project})
        history = self._recent(context.history)
        return Turn(
            question,
            context.session_id,
            history,
            self._clock(),
            pending=context.pending,
            pending_known=True,
            memories=context.memories,
            memories_for=memory_query if context.memories is not None else None,
        )

    def _recent(self, recent: list[Exchange]) -> list[Exchange]:
        if self._limits.max_exchanges == 0:
            return []
        return select_session_history(
            recent,
            now=self._clock(),
            ttl_sec=self._limits.ttl_sec,
            max_exchanges=self._limits.max_exchanges,
            max_chars=self._limits.max_chars,
        )

    async def _project(self, question: Question) -> str:
        try:
            return await self._projects.get(user_id=question.user_id, chat_id=question.chat_id)
        except StoreError as e:
            log.error("project lookup failed, using the default project: %s", e)
            return DEFAULT_PROJECT

    async def _session_id(self, question: Question) -> int | None:
        if question.session_id is not None:
            return question.session_id
        try:
            return await self._sessions.current(user_id=question.user_id, chat_id=question.chat_id)
        except StoreError as e:
            log.error("session lookup failed, answering without history: %s", e)
            return None

    async def _history(self, session_id: int | None) -> list[Exchange]:
        if session_id is None or self._limits.max_exchanges == 0:
            return []
        try:
            recent = await self._exchanges.recent(
                session_id=session_id, limit=self._limits.max_exchanges
            )
        except StoreError as e:
            log.error("history lookup failed, answering without it: %s", e)
            return []
        return self._recent(recent)


class TurnRecorder:
    """Stores the exchange, and a long-term memory entry for completed answers: in one
    round trip with a `TurnWriter`, else (or when that fails) one store at a time."""

    def __init__(
        self,
        *,
        exchanges: ExchangeStore,
        memory: LongTermMemory,
        writer: TurnWriter | None = None,
    ) -> None:
        self._exchanges = exchanges
        self._memory = memory
        self._writer = writer

    async def record(
        self, turn: Turn, answer: Answer, *, goal: str, parameters: Mapping[str, str]
    ) -> None:
        """Keep the exchange and the memory entry; `parameters` are read off the parsed
        request by the caller, so the goal is not parsed again here."""
        if self._writer is not None and await self._write_at_once(
            turn, answer, goal=goal, parameters=parameters
        ):
            return
        question = turn.question
        if turn.session_id is not None:
            await self._store_exchange(turn, turn.session_id, answer)
        if answer.strategy != "clarify":
            await self._memory.remember(
                user_id=question.user_id,
                chat_id=question.chat_id,
                project=question.project,
                question=goal,
                answer=answer,
                parameters=dict(parameters),
            )

    async def _write_at_once(
        self, turn: Turn, answer: Answer, *, goal: str, parameters: Mapping[str, str]
    ) -> bool:
        assert self._writer is not None
        question = turn.question
        exchange = None
        if turn.session_id is not None:
            exchange = _exchange(turn, turn.session_id, answer)
        try:
            entry = None
            if answer.strategy != "clarify":
                entry = self._memory.entry_for(
                    user_id=question.user_id,
                    chat_id=question.chat_id,
                    project=question.project,
                    question=goal,
                    answer=answer,
                    parameters=dict(parameters),
                )
        except ValidationError as e:
            log.error("could not remember the answer (the user still has it): %s", e)
            entry = None
        if exchange is None and entry is None:
            return True
        try:
            await self._writer.write(exchange, entry)
        except StoreError as e:
            log.warning("could not store the exchange at once, storing it piece by piece: %s", e)
            return False
        return True

    async def _store_exchange(self, turn: Turn, session_id: int, answer: Answer) -> None:
        exchange = _exchange(turn, session_id, answer)
        try:
            await self._exchanges.record(exchange)
        except StoreError as e:
            log.error("could not store the exchange (the user still gets the answer): %s", e)


def _exchange(turn: Turn, session_id: int, answer: Answer) -> Exchange:
    question = turn.question
    return Exchange(
        session_id=session_id,
        user_id=question.user_id,
        chat_id=question.chat_id,
        question=question.text,
        answer=answer.text,
        strategy=answer.strategy,
        confidence=answer.confidence,
        uncertainty_reason=answer.uncertainty_reason,
        tree_id=answer.tree_id,
        started_at=turn.started,
        finished_at=datetime.now(UTC),
        usage=answer.usage,
        error=answer.error,
    )
