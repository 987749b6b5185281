"""Asker: a question, a decision, an answer.

A pending clarification in this chat takes the message as its answer; otherwise memory is
recalled, the strategy is decided, then the question is answered quickly, analysed deeply,
clarified or declined. The question is parsed once, and the parse (`Request`) travels: a
later parse is of another text (the question completed by the previous one, the goal
memory restated, the answers to a clarification). The last event is always `answer`:
failures become an answer that says what went wrong.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable

from reasoning_core.answers.deep_path import DeepPath
from reasoning_core.answers.fixed import (
    decline_answer,
    deep_busy_answer,
    llm_failure_answer,
    no_llm_answer,
    no_runbook_answer,
    switched_off_answer,
)
from reasoning_core.answers.quick import answer_quickly, as_written
from reasoning_core.asking.details import require_details
from reasoning_core.asking.enrichment import AnswerEnricher
from reasoning_core.asking.names import known_names, linked_names
from reasoning_core.asking.outcome import Done, decided, deep_outcome, finished
from reasoning_core.changes.neighbourhood import named_subject, subject_of
from reasoning_core.errors import LLMError, StoreError
from reasoning_core.events import (
    AnswerEvent,
    ClarificationRequiredEvent,
    ErrorEvent,
    Event,
    ReasoningCompletedEvent,
    ReasoningEvent,
    ReasoningStartedEvent,
    StrategySelectedEvent,
)
from reasoning_core.i18n import N_, gettext
from reasoning_core.llm.prompts import QUICK_SYSTEM
from reasoning_core.llm.pseudonyms import begin_question
from reasoning_core.memory.budget import ContextBudget, history_messages
from reasoning_core.memory.long_term import LongTermMemory, Recall
from reasoning_core.memory.reuse import parameters_of
from reasoning_core.memory.turn import Turn, TurnLoader, TurnRecorder
from reasoning_core.models import Answer, Question, StrategyDecision, Usage, as_language
from reasoning_core.ports import (
    AnswerStream,
    ChatMessage,
    ChatModel,
    DeepSlotLimiter,
    Exchange,
    PendingClarification,
)
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.strategy import clarification as clar
from reasoning_core.strategy.clarification import Clarifier
from reasoning_core.strategy.selector import Routed, StrategySelector
from reasoning_core.understanding.catalogue import EntityCatalogue, KnownNames
from reasoning_core.understanding.parse import detect_language, understand
from reasoning_core.understanding.pending import answers_pending
from reasoning_core.understanding.request import Request

log = logging.getLogger(__name__)

#: What the asker says while it works, and the notes it adds to answers.
_WORDS: dict[str, str] = {
    "thinking": N_("Thinking…"),
    "done": N_("Done"),
    "strategy": N_("Strategy: {strategy} ({p:.2f})"),
    "quick": N_("quick"),
    "deep": N_("deep"),
    "clarify": N_("clarify"),
    "decline": N_("decline"),
    "detail": N_("I need a detail before I start"),
    "pending_note": N_("This question deserves a deep analysis; for now, here is a quick answer."),
    "ambiguous": N_("the question stayed ambiguous after the clarification rounds"),
}


class Asker:
    """Decides how to answer a question, answers it, and records the exchange.

    :param chat_model: answers quick questions (None: the runbooks and fixed answers only)
    :param deep: the deep path (None: deep questions get a quick answer with a note)
    :param deep_slots: MAX_CONCURRENT_DEEP_PER_USER (None: no limit)
    :param catalogue: the data's names, which questions are linked against
    :param enricher: adds what changed and what the logs say to deep reports
    """

    def __init__(
        self,
        *,
        chat_model: ChatModel | None,
        turns: TurnLoader,
        recorder: TurnRecorder,
        memory: LongTermMemory,
        budget: ContextBudget,
        strategy: StrategySelector,
        clarifier: Clarifier,
        deep: DeepPath | None,
        deep_slots: DeepSlotLimiter | None,
        catalogue: EntityCatalogue | None,
        enricher: AnswerEnricher,
    ) -> None:
        self._model = chat_model
        self._turns = turns
        self._recorder = recorder
        self._memory = memory
        self._budget = budget
        self._strategy = strategy
        self._clarifier = clarifier
        self._deep = deep
        self._slots = deep_slots
        self._catalogue = catalogue
        self._enricher = enricher

    async def ask(
        self, question: Question, *, stream: AnswerStream | None = None
    ) -> AsyncIterator[Event]:
        """The events of answering `question`; a quick answer's text also goes to `stream`
        while the model writes it (the final `answer` event carries it whole)."""
        yield ReasoningStartedEvent(
            message=gettext(detect_language(question.text), _WORDS["thinking"])
        )
        known = await known_names(self._catalogue)
        # The one parse of the question: everything after reads `turn.request`.
        request = understand(question.text, known)
        begin_question(linked_names(request, known))  # what LLM_PSEUDONYMIZE hides
        # The memory search for the question as parsed goes with the turn's reads.
        turn = await self._turns.load(question, memory_query=request.text)
        turn = turn.parsed(request, known)
        pending = (
            turn.pending if turn.pending_known else await self._active_clarification(turn.question)
        )
        if pending is not None and not _answers(request, pending):
            await self._drop_clarification(pending)  # a request of its own
            pending = None
        steps = (
            self._continue_clarification(turn, pending, known)
            if pending is not None
            else self._decide(turn, known, stream)
        )
        final: AnswerEvent | None = None
        async for event in steps:
            if isinstance(event, AnswerEvent):
                final = event
            else:
                yield event
        assert final is not None
        yield ReasoningCompletedEvent(message=gettext(final.answer.language, _WORDS["done"]))
        await self._recorder.record(
            turn,
            final.answer,
            goal=final.goal if final.goal is not None else turn.question.text,
            parameters=final.parameters if final.parameters is not None else {},
        )
        yield AnswerEvent(answer=final.answer)

    # --- the decision point -------------------------------------------------------

    async def _decide(
        self, turn: Turn, known: KnownNames, stream: AnswerStream | None
    ) -> AsyncIterator[Event]:
        request = _with_previous_subject(turn, known)
        recall = await self._recall(turn, request)
        yield _memory_event(recall)
        if recall.question != request.text:  # "like yesterday": the goal now names more
            request = understand(recall.question, known, language=request.language)
        routed = await self._route(turn, recall, request, known, stream)
        usage, request = routed.usage, routed.request
        decision = await self._require_details(turn, recall, routed.decision, request)
        yield _selected(decision)
        if decision.strategy == "clarify" and decision.questions:
            try:
                pending = await self._clarifier.open(turn.question, decision)
            except StoreError as e:  # cannot remember the question: answer as best we can
                log.error("could not store a clarification, answering directly: %s", e)
            else:
                yield _clarification_event(pending)
                yield finished(clar.prompt_answer(pending), usage)
                return
        early = routed.answer if decision.strategy == "quick" else None
        steps = self._execute(
            turn,
            recall,
            decision,
            usage,
            request=request,
            known=known,
            assumptions=[],
            early=early,
            stream=stream,
        )
        async for event in steps:
            yield event

    async def _continue_clarification(
        self, turn: Turn, pending: PendingClarification, known: KnownNames
    ) -> AsyncIterator[Event]:
        if not turn.question.text.strip():
            yield finished(
                clar.prompt_answer(pending, note=clar.wording("empty", pending.decision.language)),
                Usage(),
            )
            return
        pending = await self._clarifier.accept(pending, turn.question.text)
        language = as_language(pending.decision.language)
        answered = clar.question_with_answers(pending)
        request = understand(answered, known, language=language)
        asked = pending.next_question
        if asked is not None and not _covered(request, asked.asks):
            yield finished(clar.prompt_answer(pending), Usage())
            return
        goal = clar.goal_with_answers(pending)
        # the goal is parsed too only when the questions' wording is in it
        goal_request = understand(goal, known) if goal != answered else request
        recall = await self._recall(turn, goal_request, query=goal)
        yield _memory_event(recall)
        decision, usage, request = await self._select(turn, request, known)
        # The goal is what the user asked and then answered, in their words: a model's
        # restatement of it must not drop them ("nothing needs to be investigated").
        decision = decision.model_copy(update={"restated_goal": " ".join(answered.split())})
        decision = await self._require_details(turn, recall, decision, request)
        yield _selected(decision)
        assumptions: list[str] = []
        if decision.strategy == "clarify" and decision.questions:
            if pending.round < self._clarifier.max_rounds:
                pending = await self._clarifier.next_round(pending, decision)
                yield _clarification_event(pending)
                yield finished(clar.prompt_answer(pending), usage)
                return
            assumptions = clar.assumptions(pending)
            decision = _proceed_anyway(decision)
        await self._clarifier.close(pending)
        steps = self._execute(
            turn, recall, decision, usage, request=request, known=known, assumptions=assumptions
        )
        async for event in steps:
            yield event

    async def _execute(
        self,
        turn: Turn,
        recall: Recall,
        decision: StrategyDecision,
        usage: Usage,
        *,
        request: Request,
        known: KnownNames,
        assumptions: list[str],
        early: Answer | None = None,
        stream: AnswerStream | None = None,
    ) -> AsyncIterator[Event]:
        # What a later "like yesterday" may reuse: this request's names, then reused ones.
        parameters = {**parameters_of(request), **recall.parameters}
        done = Done(goal=recall.question, parameters=parameters)
        if decision.strategy == "decline":
            yield finished(decline_answer(decision), usage, done)
            return
        if decision.strategy == "deep" and self._deep is not None:
            steps = deep_outcome(
                self._deep_run(turn, recall, decision, request),
                decision=decision,
                enricher=self._enricher,
                subject=subject_of(parameters) or _mentioned_subject(request),
                onset=None,
                usage=usage,
                assumptions=assumptions,
                done=done,
            )
            async for event in steps:
                yield event
            return
        if early is None and request.intent == "diagnose" and self._model is None:
            # An incident question no runbook fits (`_require_details`) is no small talk.
            answer = await self._no_runbook(request, known, decision.language)
        else:
            answer = early or await self._quick(turn, recall, decision.language, stream)
        if answer.error and answer.error != "llm_not_configured":
            yield ErrorEvent(message=answer.error)
        answer = decided(answer, decision, assumptions)
        if decision.strategy == "deep":
            answer = _deep_pending_note(answer, decision.language)
        yield finished(answer, usage, done)

    async def _deep_run(
        self, turn: Turn, recall: Recall, decision: StrategyDecision, request: Request
    ) -> AsyncIterator[Event]:
        """The deep path under the user's slot limit (MAX_CONCURRENT_DEEP_PER_USER)."""
        deep = self._deep
        assert deep is not None
        question = turn.question
        ctx = _planning_context(turn, recall, decision, request)

        def run() -> AsyncIterator[Event]:
            return deep.run(
                ctx, decision, user_id=question.user_id, chat_id=question.chat_id, key=question.key
            )

        slots = self._slots
        if slots is None:
            async for event in run():
                yield event
            return
        async with slots.slot(question.user_id) as acquired:
            if not acquired:
                yield AnswerEvent(answer=deep_busy_answer(slots.limit, decision))
                return
            async for event in run():
                yield event

    async def _require_details(
        self, turn: Turn, recall: Recall, decision: StrategyDecision, request: Request
    ) -> StrategyDecision:
        ctx = _planning_context(turn, recall, decision, request)
        return await require_details(
            decision, request, ctx, deep=self._deep, has_model=self._model is not None
        )

    async def _recall(self, turn: Turn, request: Request, *, query: str | None = None) -> Recall:
        """Memory for the goal `request` parsed (`query`: its text as written, when the
        recall should search for that rather than for what the parse read)."""
        q = turn.question
        goal = request.text if query is None else query
        found = turn.memories if turn.memories_for == goal else None
        return await self._memory.recall(
            user_id=q.user_id,
            chat_id=q.chat_id,
            project=q.project,
            query=goal,
            request=request,
            found=found,
        )

    async def _select(
        self, turn: Turn, request: Request, known: KnownNames
    ) -> tuple[StrategyDecision, Usage, Request]:
        recent = [n for past in turn.recent for n in past.names]
        return await self._strategy.decide_and_understand(
            request,
            known=known,
            user_id=turn.question.user_id,
            project=turn.question.project,
            recent_entities=list(dict.fromkeys(recent)),
            recent_context=[past.question for past in turn.history[-3:]],
        )

    async def _route(
        self,
        turn: Turn,
        recall: Recall,
        request: Request,
        known: KnownNames,
        stream: AnswerStream | None,
    ) -> Routed:
        """The decision, in one model round trip with the answer for a likely quick one."""
        recent = [n for past in turn.recent for n in past.names]

        def fit(system: str, question: str) -> list[ChatMessage]:
            return self._fit(turn, recall, system=system, question=question)

        return await self._strategy.route(
            request,
            known=known,
            user_id=turn.question.user_id,
            project=turn.question.project,
            recent_entities=list(dict.fromkeys(recent)),
            recent_context=[past.question for past in turn.history[-3:]],
            fit=fit,
            stream=stream,
        )

    def _fit(
        self,
        turn: Turn,
        recall: Recall,
        *,
        system: str,
        question: str,
        answer_of: Callable[[Exchange], str] | None = None,
    ) -> list[ChatMessage]:
        """A prompt in the context budget, with this turn's history (earlier answers as
        `answer_of` writes them) and recalled memory."""
        return self._budget.fit(
            system=system,
            question=question,
            history=history_messages(turn.history, answer_of=answer_of),
            retrieved=recall.prompt_text,
        ).messages

    async def _quick(
        self, turn: Turn, recall: Recall, language: str, stream: AnswerStream | None = None
    ) -> Answer:
        model = self._model
        if model is None:
            return no_llm_answer(language)
        messages = self._fit(
            turn, recall, system=QUICK_SYSTEM, question=recall.question, answer_of=as_written
        )
        try:
            return await answer_quickly(model, messages, language=language, stream=stream)
        except LLMError as e:
            log.warning("quick answer failed: %s: %s", type(e).__name__, e)
            return llm_failure_answer(e, language)

    async def _no_runbook(self, request: Request, known: KnownNames, language: str) -> Answer:
        """No live runbook fits and no model can plan: the runbooks discovery switched off
        that would, else what changed around what it names, else what can be investigated
        here."""
        off = self._deep.switched_off(request) if self._deep is not None else []
        answer = await self._enricher.candidates(_mentioned_subject(request), language, onset=None)
        if answer is not None:
            if off:
                note = switched_off_answer(off, language).text
                answer = answer.model_copy(update={"text": f"{answer.text}\n\n{note}"})
            return answer
        if off:
            return switched_off_answer(off, language)
        return no_runbook_answer(known.names, language)

    async def _drop_clarification(self, pending: PendingClarification) -> None:
        try:
            await self._clarifier.close(pending)
        except StoreError as e:
            log.error("could not drop a pending clarification: %s", e)

    async def _active_clarification(self, question: Question) -> PendingClarification | None:
        try:
            return await self._clarifier.active(question)
        except StoreError as e:
            log.error("clarification lookup failed, treating the message as new: %s", e)
            return None


def _mentioned_subject(request: Request) -> dict[str, str]:
    """What a question names (its first name not known to be absent), as any subject label."""
    return named_subject(next((m.value for m in request.mentions if m.known is not False), None))


def _with_previous_subject(turn: Turn, known: KnownNames) -> Request:
    """A bare period after a question ("since tuesday") asks that question again for it;
    a question that points back, names nothing and says what changed ("why is it
    dropping", "трафик на ней просел") asks about what the previous question named."""
    request = turn.request
    assert request is not None, "ask() parses the question into the turn first"
    if not turn.history or turn.previous is None:
        return request
    # "since tuesday", "what about since monday?": a period, and nothing else asked
    fragment = (
        (not request.complete or request.intent == "chat")
        and not request.mentions
        and not request.metrics
    )
    previous = turn.history[-1].question
    if fragment and request.dates.start is not None:
        return understand(f"{previous} {request.text}", known, language=request.language)
    if request.about_earlier and _names_something(turn.previous):
        return understand(f"{previous} {request.text}", known, language=request.language)
    return request


def _names_something(request: Request) -> bool:
    return any(m.kind != "name" and m.known is not False for m in request.mentions)


def _covered(request: Request, asks: str | None) -> bool:
    """The answers so far already say what the next question asks ("cell 1, since Monday")."""
    if asks == "period":
        return request.dates.start is not None
    if asks == "symptom":
        return bool(request.metrics) or request.direction not in (None, "any")
    if asks is not None:
        return any(m.kind in (asks, "id") or asks == "subject" for m in request.mentions)
    return False


def _answers(request: Request, pending: PendingClarification) -> bool:
    asked = pending.next_question
    return answers_pending(request, asked.asks if asked is not None else None)


def _planning_context(
    turn: Turn, recall: Recall, decision: StrategyDecision, request: Request
) -> PlanningContext:
    question = turn.question
    return PlanningContext(
        question=question.text,
        goal=recall.question,
        language=decision.language,
        user_id=question.user_id,
        parameters=dict(recall.parameters),
        memory=[recall.prompt_text] if recall.prompt_text else [],
        request=request,
    )


def _selected(decision: StrategyDecision) -> StrategySelectedEvent:
    language = decision.language
    return StrategySelectedEvent(
        message=gettext(language, _WORDS["strategy"]).format(
            strategy=gettext(language, _WORDS[decision.strategy]), p=decision.confidence
        ),
        decision=decision,
    )


def _memory_event(recall: Recall) -> ReasoningEvent:
    """How many long-term memory entries went into this answer's context (for metrics)."""
    return ReasoningEvent(memory_hits=len(recall.entries))


def _clarification_event(pending: PendingClarification) -> ClarificationRequiredEvent:
    return ClarificationRequiredEvent(
        message=gettext(pending.decision.language, _WORDS["detail"]),
        clarification_id=pending.id,
        questions=list(pending.questions),
    )


def _proceed_anyway(decision: StrategyDecision) -> StrategyDecision:
    """After the last round: act on the best understanding (a diagnostic question -> deep)."""
    return decision.model_copy(
        update={
            "strategy": "deep",
            "questions": [],
            "confidence": min(decision.confidence, 0.5),
            "uncertainty_reason": gettext(decision.language, _WORDS["ambiguous"]),
        }
    )


def _deep_pending_note(answer: Answer, language: str) -> Answer:
    """Deep analysis needs the hypothesis tree; until it runs, say so on the quick answer."""
    note = gettext(language, _WORDS["pending_note"])
    return answer.model_copy(update={"text": f"{note}\n\n{answer.text}"})
