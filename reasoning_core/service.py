"""ReasoningService: one question in, a stream of events out, the exchange persisted.

Front ends (Telegram, `whytree chat`, `whytree ask`) all go through `ask`. The
last event of every run is `answer`: failures become an answer that says what
went wrong, never an exception for the front end to handle.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

from reasoning_core.errors import LLMError, LLMTimeoutError, StoreError
from reasoning_core.events import Event
from reasoning_core.models import Answer, Question, StrategyDecision
from reasoning_core.ports import ChatModel, Exchange, ExchangeStore, SessionStore
from reasoning_core.quick import answer_quickly

log = logging.getLogger(__name__)

NO_LLM_TEXT = (
    "No language model is configured, so I can't answer free-form questions yet. "
    "Set OPENAI_API_KEY and LLM_MODEL (or OPENAI_BASE_URL for a local OpenAI-compatible "
    "server such as Ollama or vLLM) and restart whytree."
)


@dataclass(frozen=True, kw_only=True)
class Deps:
    """The collaborators of the reasoning core, wired by the composition root."""

    chat_model: ChatModel | None
    sessions: SessionStore
    exchanges: ExchangeStore
    history_limit: int = 6


class ReasoningService:
    """Decides how to answer a question, answers it, and records the exchange."""

    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    async def new_session(self, *, user_id: int, chat_id: int) -> int:
        return await self._deps.sessions.start_new(user_id=user_id, chat_id=chat_id)

    async def answer(self, question: Question) -> Answer:
        """Run `ask` to the end and return the final answer."""
        final: Answer | None = None
        async for event in self.ask(question):
            if event.answer is not None:
                final = event.answer
        assert final is not None, "ask() always ends with an answer event"
        return final

    async def ask(self, question: Question) -> AsyncIterator[Event]:
        started = datetime.now(UTC)
        yield Event(kind="reasoning_started", message="Thinking…")
        session_id = await self._session_id(question)
        decision = StrategyDecision(
            strategy="quick", confidence=0.5, reason="answered directly", source="heuristic"
        )
        yield Event(
            kind="strategy_selected", message="Answering directly", data=decision.model_dump()
        )
        answer = await self._quick(question, session_id)
        if answer.error and answer.error != "llm_not_configured":
            yield Event(kind="error", message=answer.error)
        answer = answer.model_copy(update={"decision": decision, "reason": decision.reason})
        yield Event(kind="reasoning_completed", message="Done")
        await self._record(question, session_id, answer, started)
        yield Event(kind="answer", answer=answer)

    async def _session_id(self, question: Question) -> int | None:
        if question.session_id is not None:
            return question.session_id
        try:
            return await self._deps.sessions.current(
                user_id=question.user_id, chat_id=question.chat_id
            )
        except StoreError as e:
            log.error("session lookup failed, answering without history: %s", e)
            return None

    async def _quick(self, question: Question, session_id: int | None) -> Answer:
        model = self._deps.chat_model
        if model is None:
            return Answer(
                strategy="quick",
                text=NO_LLM_TEXT,
                confidence=0.0,
                uncertainty_reason="no language model is configured",
                error="llm_not_configured",
            )
        history = await self._history(session_id)
        try:
            answer, _ = await answer_quickly(model, question.text, history)
        except LLMError as e:
            log.warning("quick answer failed: %s: %s", type(e).__name__, e)
            return _llm_failure_answer(e)
        return answer

    async def _history(self, session_id: int | None) -> list[Exchange]:
        if session_id is None:
            return []
        try:
            return await self._deps.exchanges.recent(
                session_id=session_id, limit=self._deps.history_limit
            )
        except StoreError as e:
            log.error("history lookup failed, answering without it: %s", e)
            return []

    async def _record(
        self, question: Question, session_id: int | None, answer: Answer, started: datetime
    ) -> None:
        if session_id is None:
            return
        exchange = Exchange(
            session_id=session_id,
            user_id=question.user_id,
            chat_id=question.chat_id,
            question=question.text,
            answer=answer.text,
            strategy=answer.strategy,
            confidence=answer.confidence,
            uncertainty_reason=answer.uncertainty_reason,
            tree_id=answer.tree_id,
            started_at=started,
            finished_at=datetime.now(UTC),
            usage=answer.usage,
            error=answer.error,
        )
        try:
            await self._deps.exchanges.record(exchange)
        except StoreError as e:
            log.error("could not store the exchange (the user still gets the answer): %s", e)


def _llm_failure_answer(error: LLMError) -> Answer:
    if isinstance(error, LLMTimeoutError):
        why, kind = "the language model did not answer in time", "llm_timeout"
    else:
        why, kind = "the language model returned an error or an unusable answer", "llm_error"
    return Answer(
        strategy="quick",
        text=f"Sorry — I couldn't answer this time: {why}. Please try again in a minute.",
        confidence=0.0,
        uncertainty_reason=why,
        error=kind,
    )
