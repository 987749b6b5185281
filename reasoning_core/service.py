"""ReasoningService: the core's entry point, one question in, a stream of events out.

Front ends (Telegram, `whytree chat`, `whytree ask`, the HTTP API) go through `ask`; the
alert worker through `investigate` and `scan_around`. The service composes the units of
`reasoning_core/asking/` from the collaborators the composition root wires (`Deps`) and
answers the small look-ups itself (sessions, memory, clarification buttons, trees).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from reasoning_core.answers.deep_jobs import Deliver
from reasoning_core.answers.deep_path import DeepPath
from reasoning_core.asking import AlertInvestigator, AnswerEnricher, Asker, Investigation
from reasoning_core.asking.condition import ConditionReader
from reasoning_core.changes.scanner import ChangeScanner
from reasoning_core.events import AnswerEvent, Event
from reasoning_core.logs.news import LogNewsReader
from reasoning_core.memory.budget import ContextBudget
from reasoning_core.memory.long_term import LongTermMemory
from reasoning_core.memory.turn import TurnLoader, TurnRecorder
from reasoning_core.models import Answer, Language, Question, Tree, as_language
from reasoning_core.ports import AnswerStream, ChatModel, DeepSlotLimiter, SessionStore
from reasoning_core.ports.alerts import AlertCondition
from reasoning_core.strategy.clarification import Clarifier
from reasoning_core.strategy.selector import StrategySelector
from reasoning_core.understanding.catalogue import EntityCatalogue

ClarificationState = Literal["open", "expired", "foreign", "unknown", "stale"]


@dataclass(frozen=True, slots=True)
class ButtonCheck:
    """Whether a clarification button may be used, and the answer it stands for."""

    state: ClarificationState
    option: str | None = None
    #: The language of the clarifying question (None: no such question).
    language: Language | None = None


@dataclass(frozen=True, kw_only=True)
class Deps:
    """The collaborators of the reasoning core, wired by the composition root."""

    chat_model: ChatModel | None
    turns: TurnLoader
    recorder: TurnRecorder
    memory: LongTermMemory
    budget: ContextBudget
    strategy: StrategySelector
    clarifier: Clarifier
    sessions: SessionStore
    #: None: deep questions get a quick answer with a note (no planner available).
    deep: DeepPath | None = None
    deep_slots: DeepSlotLimiter | None = None
    #: The names the data knows, for linking what questions name (None: none listed).
    catalogue: EntityCatalogue | None = None
    #: What changed at the same time, when no runbook fits (None: no Prometheus).
    changes: ChangeScanner | None = None
    #: What is new in the logs since it began (None: no log source configured).
    log_news: LogNewsReader | None = None
    #: An alert's condition re-read for its report's symptom line (None: no Prometheus).
    conditions: ConditionReader | None = None


class ReasoningService:
    """Decides how to answer a question, answers it, and records the exchange."""

    def __init__(self, deps: Deps) -> None:
        self._deps = deps
        enricher = AnswerEnricher(changes=deps.changes, log_news=deps.log_news)
        self._asker = Asker(
            chat_model=deps.chat_model,
            turns=deps.turns,
            recorder=deps.recorder,
            memory=deps.memory,
            budget=deps.budget,
            strategy=deps.strategy,
            clarifier=deps.clarifier,
            deep=deps.deep,
            deep_slots=deps.deep_slots,
            catalogue=deps.catalogue,
            enricher=enricher,
        )
        self._alerts = AlertInvestigator(
            deep=deps.deep, enricher=enricher, catalogue=deps.catalogue, conditions=deps.conditions
        )

    async def new_session(self, *, user_id: int, chat_id: int) -> int:
        return await self._deps.sessions.start_new(user_id=user_id, chat_id=chat_id)

    async def purge_memory(self, *, ttl_days: int) -> int:
        """Drop long-term memory older than MEMORY_TTL_DAYS (run at start-up)."""
        return await self._deps.memory.purge(ttl_days=ttl_days)

    async def cancel_clarification(self, *, user_id: int, chat_id: int) -> bool:
        return await self._deps.clarifier.cancel(chat_id=chat_id, user_id=user_id)

    async def check_button(
        self, clarification_id: str, *, user_id: int, index: int, option: int
    ) -> ButtonCheck:
        """May this user press option `option` of question `index` now? Forged ids are unknown."""
        pending = await self._deps.clarifier.get(clarification_id)
        if pending is None:
            return ButtonCheck("unknown")
        language = as_language(pending.decision.language)
        if pending.user_id != user_id:
            return ButtonCheck("foreign", language=language)
        if not pending.is_open():
            return ButtonCheck("expired", language=language)
        if index != len(pending.answers) or index >= len(pending.questions):
            return ButtonCheck("stale", language=language)
        options = pending.questions[index].options
        chosen = options[option] if 0 <= option < len(options) else None
        return ButtonCheck("open", chosen, language=language)

    async def answer(self, question: Question, *, stream: AnswerStream | None = None) -> Answer:
        """Run `ask` to the end and return the final answer."""
        final: Answer | None = None
        async for event in self.ask(question, stream=stream):
            if isinstance(event, AnswerEvent):
                final = event.answer
        assert final is not None, "ask() always ends with an answer event"
        return final

    def ask(
        self, question: Question, *, stream: AnswerStream | None = None
    ) -> AsyncIterator[Event]:
        """The events of answering `question` (`Asker.ask`); a quick answer's text also goes
        to `stream` while the model writes it (the final `answer` event carries it whole)."""
        return self._asker.ask(question, stream=stream)

    def investigate(
        self,
        question: Question,
        *,
        parameters: Mapping[str, str],
        language: Language,
        runbook: str | None = None,
        onset: datetime | None = None,
        condition: AlertCondition | None = None,
    ) -> AsyncIterator[Event]:
        """A deep analysis whose goal and parameters are already known (an alert mapped to a
        runbook): no strategy decision, no clarification, no session; the same events and
        the same `Answer` as `ask`. Without a deep path, the quick path's answer. `onset`
        (the alert's start) is when the logs' news begins; `condition` (the rule's
        expression and the alert's labels), re-read, is the report's symptom line."""
        investigation = Investigation(
            question=question,
            parameters=parameters,
            language=language,
            runbook=runbook,
            onset=onset,
            condition=condition,
        )
        return self._alerts.investigate(investigation)

    async def scan_around(
        self, labels: Mapping[str, str], *, onset: datetime | None, language: Language
    ) -> Answer | None:
        """What changed around an alert no runbook fits, as candidates (never a cause); None
        when nothing could be scanned (`AlertInvestigator.scan_around`)."""
        return await self._alerts.scan_around(labels, onset=onset, language=language)

    async def resume_deep_jobs(self, deliver: Deliver) -> int:
        """Finish deep analyses a crashed process left running; `deliver` sends each answer."""
        if self._deps.deep is None:
            return 0
        return await self._deps.deep.resume_stale(deliver)

    async def tree(self, tree_id: str, *, user_id: int | None) -> Tree | None:
        """A tree for its owner (any tree for `user_id=None`, the operator); None if
        unknown, another user's, or no deep path."""
        if self._deps.deep is None:
            return None
        return await self._deps.deep.tree(tree_id, user_id=user_id)

    async def tree_lines(self, tree_id: str, *, user_id: int | None) -> list[str] | None:
        """A tree as text lines for its owner; None if unknown, another user's, or no deep path."""
        if self._deps.deep is None:
            return None
        return await self._deps.deep.tree_lines(tree_id, user_id=user_id)
