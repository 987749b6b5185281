"""ReasoningService: one question in, a stream of events out, the exchange persisted.

Front ends (Telegram, `whytree chat`, `whytree ask`) all go through `ask`. The
flow: a pending clarification in this chat takes the message as its answer;
otherwise memory is recalled, the strategy is decided, then the question is
answered quickly, analysed deeply, clarified or declined. The last event is
always `answer`: failures become an answer that says what went wrong.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from reasoning_core.answers.deep_jobs import Deliver
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
from reasoning_core.changes.hypotheses import is_scan_key
from reasoning_core.changes.neighbourhood import labelled_subject, named_subject, subject_of
from reasoning_core.changes.scan import ScanResult
from reasoning_core.changes.scanner import ChangeScanner, candidates_answer
from reasoning_core.errors import LLMError, ReasoningError, StoreError
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
from reasoning_core.logs.bearing import Bearing, bearing
from reasoning_core.logs.news import LogNews, LogNewsReader, describe
from reasoning_core.memory.budget import ContextBudget, history_messages
from reasoning_core.memory.long_term import LongTermMemory, Recall
from reasoning_core.memory.reuse import parameters_of
from reasoning_core.memory.turn import Turn, TurnLoader, TurnRecorder
from reasoning_core.models import (
    LOG_LEAD_CONFIDENCE,
    Answer,
    ClarifyingQuestion,
    Language,
    Question,
    StrategyDecision,
    Tree,
    Usage,
    as_language,
)
from reasoning_core.ports import (
    AnswerStream,
    ChatMessage,
    ChatModel,
    DeepSlotLimiter,
    Exchange,
    PendingClarification,
    SessionStore,
)
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.reflection.uncertainty import with_uncertainty
from reasoning_core.strategy import clarification as clar
from reasoning_core.strategy.clarification import Clarifier
from reasoning_core.strategy.selector import Routed, StrategySelector
from reasoning_core.tree.report import open_to_log_lead, report_of
from reasoning_core.tree.wording import headline
from reasoning_core.understanding.catalogue import EntityCatalogue, KnownNames
from reasoning_core.understanding.parse import detect_language, understand
from reasoning_core.understanding.pending import answers_pending
from reasoning_core.understanding.request import Request

log = logging.getLogger(__name__)

#: What the service itself says while it works, and the notes it adds to answers.
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
    "assumed": N_("answered on assumptions, since the question stayed ambiguous"),
    "changed": N_("What changed around it"),
    "logs_on_cause": N_("The logs on the cause"),
    "logs_agrees": N_("{source}'s log: {quoted}"),
    "logs_elsewhere": N_("nothing new in {source}'s log; a new error elsewhere: {quoted}"),
}


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


class ReasoningService:
    """Decides how to answer a question, answers it, and records the exchange."""

    def __init__(self, deps: Deps) -> None:
        self._deps = deps

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

    async def ask(
        self, question: Question, *, stream: AnswerStream | None = None
    ) -> AsyncIterator[Event]:
        """The events of answering `question`; a quick answer's text also goes to `stream`
        while the model writes it (the final `answer` event carries it whole)."""
        yield ReasoningStartedEvent(
            message=gettext(detect_language(question.text), _WORDS["thinking"])
        )
        known = await self._known_names()
        # The one parse of the question: everything after reads `turn.request`.
        request = understand(question.text, known)
        begin_question(_linked_names(request, known))  # what LLM_PSEUDONYMIZE hides
        # The memory search for the question as parsed goes with the turn's reads.
        turn = await self._deps.turns.load(question, memory_query=request.text)
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
        await self._deps.recorder.record(
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
                pending = await self._deps.clarifier.open(turn.question, decision)
            except StoreError as e:  # cannot remember the question: answer as best we can
                log.error("could not store a clarification, answering directly: %s", e)
            else:
                yield _clarification_event(pending)
                yield _answer(clar.prompt_answer(pending), usage)
                return
        early = routed.answer if decision.strategy == "quick" else None
        steps = self._execute(
            turn, recall, decision, usage, request=request, assumptions=[],
            early=early, stream=stream,
        )  # fmt: skip
        async for event in steps:
            yield event

    async def _continue_clarification(
        self, turn: Turn, pending: PendingClarification, known: KnownNames
    ) -> AsyncIterator[Event]:
        if not turn.question.text.strip():
            yield _answer(
                clar.prompt_answer(pending, note=clar.wording("empty", pending.decision.language)),
                Usage(),
            )
            return
        pending = await self._deps.clarifier.accept(pending, turn.question.text)
        language = as_language(pending.decision.language)
        request = understand(clar.question_with_answers(pending), known, language=language)
        asked = pending.next_question
        if asked is not None and not _covered(request, asked.asks):
            yield _answer(clar.prompt_answer(pending), Usage())
            return
        goal = clar.goal_with_answers(pending)
        if goal != clar.question_with_answers(pending):  # the questions' wording is in it
            goal_request = understand(goal, known)
        else:
            goal_request = request
        recall = await self._recall(turn, goal_request, query=goal)
        yield _memory_event(recall)
        decision, usage, request = await self._select(turn, request, known)
        # The goal is what the user asked and then answered, in their words: a model's
        # restatement of it must not drop them ("nothing needs to be investigated").
        decision = decision.model_copy(
            update={"restated_goal": " ".join(clar.question_with_answers(pending).split())}
        )
        decision = await self._require_details(turn, recall, decision, request)
        yield _selected(decision)
        assumptions: list[str] = []
        if decision.strategy == "clarify" and decision.questions:
            if pending.round < self._deps.clarifier.max_rounds:
                pending = await self._deps.clarifier.next_round(pending, decision)
                yield _clarification_event(pending)
                yield _answer(clar.prompt_answer(pending), usage)
                return
            assumptions = clar.assumptions(pending)
            decision = _proceed_anyway(decision)
        await self._deps.clarifier.close(pending)
        steps = self._execute(
            turn, recall, decision, usage, request=request, assumptions=assumptions
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
        assumptions: list[str],
        early: Answer | None = None,
        stream: AnswerStream | None = None,
    ) -> AsyncIterator[Event]:
        # What a later "like yesterday" may reuse: this request's names, then reused ones.
        parameters = {**parameters_of(request), **recall.parameters}
        done = _Done(goal=recall.question, parameters=parameters)
        if decision.strategy == "decline":
            yield _answer(decline_answer(decision), usage, done)
            return
        if decision.strategy == "deep" and self._deps.deep is not None:
            async for event in self._deep(turn, recall, decision, request):
                if isinstance(event, AnswerEvent):
                    answer = _decided(event.answer, decision, assumptions)
                    subject = subject_of(parameters) or _mentioned_subject(request)
                    answer = await self._with_changes(answer, subject)
                    answer = await self._with_log_news(answer, onset=None, subject=subject)
                    yield _answer(answer, usage, done)
                else:
                    yield event
            return
        if early is None and request.intent == "diagnose" and self._deps.chat_model is None:
            # An incident question no runbook fits (`_require_details`) is no small talk.
            answer = await self._no_runbook(request, decision.language)
        else:
            answer = early or await self._quick(turn, recall, decision.language, stream)
        if answer.error and answer.error != "llm_not_configured":
            yield ErrorEvent(message=answer.error)
        answer = _decided(answer, decision, assumptions)
        if decision.strategy == "deep":
            answer = _deep_pending_note(answer, decision.language)
        yield _answer(answer, usage, done)

    async def _deep(
        self, turn: Turn, recall: Recall, decision: StrategyDecision, request: Request
    ) -> AsyncIterator[Event]:
        """The deep path under the user's slot limit (MAX_CONCURRENT_DEEP_PER_USER)."""
        slots = self._deps.deep_slots
        if slots is None:
            async for event in self._run_deep(turn, recall, decision, request):
                yield event
            return
        async with slots.slot(turn.question.user_id) as acquired:
            if not acquired:
                yield AnswerEvent(answer=deep_busy_answer(slots.limit, decision))
                return
            async for event in self._run_deep(turn, recall, decision, request):
                yield event

    def _run_deep(
        self, turn: Turn, recall: Recall, decision: StrategyDecision, request: Request
    ) -> AsyncIterator[Event]:
        assert self._deps.deep is not None
        ctx = _planning_context(turn, recall, decision, request)
        question = turn.question
        return self._deps.deep.run(
            ctx, decision, user_id=question.user_id, chat_id=question.chat_id, key=question.key
        )

    async def investigate(
        self,
        question: Question,
        *,
        parameters: Mapping[str, str],
        language: Language,
        runbook: str | None = None,
        onset: datetime | None = None,
    ) -> AsyncIterator[Event]:
        """A deep analysis whose goal and parameters are already known (an alert mapped to a
        runbook): no strategy decision, no clarification, no session; the same events and
        the same `Answer` as `ask`. Without a deep path, the quick path's answer. `onset`
        (the alert's start) is when the logs' news begins."""
        known = await self._known_names()
        request = understand(question.text, known, language=language)
        begin_question(_linked_names(request, known))
        decision = StrategyDecision(
            strategy="deep",
            confidence=1.0,
            reason="investigation",
            restated_goal=question.text,
            language=language,
        )
        yield ReasoningStartedEvent(message=gettext(language, _WORDS["thinking"]))
        if self._deps.deep is None:
            yield _answer(no_llm_answer(language), Usage())
            return
        ctx = PlanningContext(
            question=question.text,
            goal=question.text,
            language=language,
            user_id=question.user_id,
            parameters=dict(parameters),
            request=request,
            runbook=runbook,
        )
        run = self._deps.deep.run(
            ctx, decision, user_id=question.user_id, chat_id=question.chat_id, key=question.key
        )
        async for event in run:
            if isinstance(event, AnswerEvent):
                answer = _decided(event.answer, decision, [])
                subject = subject_of(parameters)
                answer = await self._with_changes(answer, subject)
                answer = await self._with_log_news(answer, onset=onset, subject=subject)
                yield _answer(answer, Usage())
            else:
                yield event

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

    async def _require_details(
        self, turn: Turn, recall: Recall, decision: StrategyDecision, request: Request
    ) -> StrategyDecision:
        """Ask only what cannot be defaulted: when a runbook fits a diagnosis, its missing
        parameters (which cell: unknown, several, a site's cells) are the only questions,
        and a runbook with everything it needs goes deep at once."""
        if decision.strategy == "quick" and self._deps.chat_model is None:
            return await self._fits_a_runbook(turn, recall, decision, request)
        if decision.strategy not in ("deep", "clarify") or self._deps.deep is None:
            return decision
        if decision.strategy == "clarify" and (
            request.intent != "diagnose" or decision.source == "llm"
        ):
            return decision  # the model's own question stands
        ctx = _planning_context(turn, recall, decision, request)
        questions = await self._deps.deep.missing_details(ctx)
        if questions is None and self._deps.chat_model is None and decision.strategy == "deep":
            # No runbook fits and no model could plan: say so rather than fail the analysis.
            return decision.model_copy(update={"strategy": "quick"})
        if questions is None:  # no runbook fits: the strategy's own questions stand
            return decision
        return _asking(decision, questions)

    async def _fits_a_runbook(
        self, turn: Turn, recall: Recall, decision: StrategyDecision, request: Request
    ) -> StrategyDecision:
        """No model to answer a quick question: one a runbook's words fit is about the
        system ("место на диске закончилось?"), never "I can't answer free-form questions"."""
        if self._deps.deep is None or not _may_be_about_the_system(request):
            return decision
        ctx = _planning_context(turn, recall, decision, request)
        questions = await self._deps.deep.missing_details(ctx)
        return decision if questions is None else _asking(decision, questions)

    async def _recall(self, turn: Turn, request: Request, *, query: str | None = None) -> Recall:
        """Memory for the goal `request` parsed (`query`: its text as written, when the
        recall should search for that rather than for what the parse read)."""
        q = turn.question
        goal = request.text if query is None else query
        found = turn.memories if turn.memories_for == goal else None
        return await self._deps.memory.recall(
            user_id=q.user_id, chat_id=q.chat_id, project=q.project, query=goal,
            request=request, found=found,
        )  # fmt: skip

    async def _select(
        self, turn: Turn, request: Request, known: KnownNames
    ) -> tuple[StrategyDecision, Usage, Request]:
        recent = [n for past in turn.recent for n in past.names]
        return await self._deps.strategy.decide_and_understand(
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

        return await self._deps.strategy.route(
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
        return self._deps.budget.fit(
            system=system,
            question=question,
            history=history_messages(turn.history, answer_of=answer_of),
            retrieved=recall.prompt_text,
        ).messages

    async def _quick(
        self, turn: Turn, recall: Recall, language: str, stream: AnswerStream | None = None
    ) -> Answer:
        model = self._deps.chat_model
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

    async def _no_runbook(self, request: Request, language: str) -> Answer:
        """No live runbook fits and no model can plan: the runbooks discovery switched off
        that would, else what can be investigated here."""
        off = self._deps.deep.switched_off(request) if self._deps.deep is not None else []
        scanned = await self._scan(_mentioned_subject(request))
        if scanned is not None:
            answer = await self._news_below(candidates_answer(scanned, language), onset=None)
            if off:
                note = switched_off_answer(off, language).text
                answer = answer.model_copy(update={"text": f"{answer.text}\n\n{note}"})
            return answer
        if off:
            return switched_off_answer(off, language)
        known = await self._known_names()
        return no_runbook_answer(known.names, language)

    async def scan_around(
        self, labels: Mapping[str, str], *, onset: datetime | None, language: Language
    ) -> Answer | None:
        """What changed around an alert no runbook fits, as candidates (never a cause): the
        change scan of what its labels name (`instance`, `job`, `service`, `pod`) before
        `onset` (the alert's start). None when no scanner is wired, the labels name nothing
        Prometheus scrapes, or the scan failed."""
        scanned = await self._scan(labelled_subject(labels), onset=onset)
        if scanned is None:
            return None
        return await self._news_below(candidates_answer(scanned, language), onset=onset)

    async def _with_changes(self, answer: Answer, subject: Mapping[str, str]) -> Answer:
        """A deep report that established no cause (or one only by elimination) gets what
        changed around its subject — the change scan, where an engineer would look next —
        as a section of its own below the report: candidates, never the cause. A tree the
        scan already grew candidates in (a revision's) says it there."""
        synthesis = answer.synthesis
        if synthesis is None or not (synthesis.not_established or synthesis.by_elimination):
            return answer
        if any(is_scan_key(ranked.id) for ranked in synthesis.ranking):
            return answer
        scanned = await self._scan(subject)
        if scanned is None:
            return answer
        changed = scanned.describe(answer.language)
        heading = gettext(answer.language, _WORDS["changed"])
        return answer.model_copy(
            update={
                "text": f"{answer.text}\n\n{heading}: {changed}",
                "synthesis": synthesis.model_copy(update={"changed": changed}),
            }
        )

    async def _news_below(self, answer: Answer, *, onset: datetime | None) -> Answer:
        """The change scan's candidates with what is new in the logs since `onset` below
        them: the lines an engineer reads beside what changed, never a cause."""
        if self._deps.log_news is None:
            return answer
        news = await self._deps.log_news.read(onset=onset)
        if news is None or not news.new:
            return answer
        body = describe(news, answer.language)
        return answer.model_copy(
            update={"text": f"{answer.text}\n\n{news.heading(answer.language)}:\n{body}"}
        )

    async def _with_log_news(
        self, answer: Answer, *, onset: datetime | None, subject: Mapping[str, str]
    ) -> Answer:
        """A deep report gets what is new in the logs since `onset` (else the last minutes):
        the lines an engineer reads first, beside the checks' own. A line a check already
        quoted is not quoted again; a report that established its cause and found nothing
        new in the logs says nothing of them, one that did not says what was read. A cause
        the checks put forward gets the lines of the part it blames that agree with it, or
        the new errors elsewhere when its part wrote none (logs/bearing.py)."""
        synthesis = answer.synthesis
        reader = self._deps.log_news
        if synthesis is None or reader is None:
            return answer
        news = await reader.read(onset=onset)
        if news is None:
            return answer
        if not open_to_log_lead(synthesis) and synthesis.primary.id != "none":
            answer = _with_bearing(
                answer, bearing(
                    news, title=synthesis.primary.title, subject=subject.values(),
                    names=reader.names(),
                ), news,
            )  # fmt: skip
            synthesis = answer.synthesis
            assert synthesis is not None
        fresh = [t for t in news.new if t.example not in answer.text]
        heading = news.heading(answer.language)
        top = news.leading()
        if open_to_log_lead(synthesis) and top is not None:
            lead = news.quoted(top, answer.language)
            # no check established a cause: the new error written most is where one starts
            # (quoted by a check below or not: it is still the line to read first)
            rest = replace(news, new=tuple(t for t in fresh if t is not top))
            body = describe(rest, answer.language) if rest.new else None
            text = _led_by_log(answer, lead)
            return answer.model_copy(
                update={
                    "text": f"{text}\n\n{heading}:\n{body}" if body else text,
                    "synthesis": synthesis.model_copy(update={"log_news": body, "log_lead": lead}),
                    "confidence": LOG_LEAD_CONFIDENCE,
                }
            )
        settled = not (synthesis.not_established or synthesis.by_elimination)
        if not fresh and (settled or news.new):
            return answer
        body = describe(replace(news, new=tuple(fresh)), answer.language)
        if body is None:
            return answer
        return answer.model_copy(
            update={
                "text": f"{answer.text}\n\n{heading}:\n{body}",
                "synthesis": synthesis.model_copy(update={"log_news": body}),
            }
        )

    async def _scan(
        self, subject: Mapping[str, str], *, onset: datetime | None = None
    ) -> ScanResult | None:
        """The change scan of `subject`, or None when no scanner is wired, the subject is
        empty or names nothing Prometheus scrapes, or Prometheus failed."""
        if self._deps.changes is None or not subject:
            return None
        try:
            return await self._deps.changes.scan(subject, symptom_onset=onset)
        except ReasoningError as e:
            log.warning("change scan failed: %s", e)
            return None

    async def _known_names(self) -> KnownNames:
        if self._deps.catalogue is None:
            return KnownNames()
        try:
            return await self._deps.catalogue.snapshot()
        except ReasoningError as e:  # the names are a help; the question is still answered
            log.warning("could not read the known names: %s", e)
            return KnownNames()

    async def _drop_clarification(self, pending: PendingClarification) -> None:
        try:
            await self._deps.clarifier.close(pending)
        except StoreError as e:
            log.error("could not drop a pending clarification: %s", e)

    async def _active_clarification(self, question: Question) -> PendingClarification | None:
        try:
            return await self._deps.clarifier.active(question)
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


def _asking(decision: StrategyDecision, questions: list[ClarifyingQuestion]) -> StrategyDecision:
    """Deep at once when a runbook has everything it needs, else its questions."""
    if not questions:
        return decision.model_copy(update={"strategy": "deep", "questions": []})
    return decision.model_copy(update={"strategy": "clarify", "questions": questions[:3]})


def _may_be_about_the_system(request: Request) -> bool:
    """A quick question that may still be an incident one: not small talk, a definition,
    a question about the bot, an order or a fragment."""
    signals = request.signals
    return (
        request.intent == "chat"
        and request.complete
        and request.decline is None
        and not (signals.social or signals.about_bot or signals.framed_as_definition)
    )


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


def _linked_names(request: Request, known: KnownNames) -> list[tuple[str, str]]:
    """(kind, name) of what the question names, and of the things under them."""
    names = [(m.kind, m.value) for m in request.mentions]
    for mention in request.mentions:
        for member in mention.members:
            names += known.lookup(member) or [(mention.kind, member)]
    return names


@dataclass(frozen=True)
class _Done:
    """What an answer was about, for the recorder: the goal and the parameters a later
    "like yesterday" may reuse."""

    goal: str
    parameters: dict[str, Any]


def _answer(answer: Answer, usage: Usage, done: _Done | None = None) -> AnswerEvent:
    # Every path ends here: below 0.7 the answer says why, from the real causes.
    merged = with_uncertainty(answer.model_copy(update={"usage": answer.usage + usage}))
    if done is None:
        return AnswerEvent(answer=merged)
    return AnswerEvent(answer=merged, goal=done.goal, parameters=done.parameters)


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


def _with_bearing(answer: Answer, found: Bearing | None, news: LogNews) -> Answer:
    """The answer with how the logs bear on its cause as a section of its own (a line a
    check already quoted is not quoted again)."""
    if found is None or answer.synthesis is None:
        return answer
    language = answer.language
    key, items = ("agrees", found.agrees) if found.agrees else ("elsewhere", found.elsewhere)
    items = tuple(item for item in items if item.example not in answer.text)  # a check's quote
    if not items:
        return answer
    lines = [
        gettext(language, _WORDS[f"logs_{key}"]).format(
            source=found.blamed, quoted=news.quoted(item, language)
        )
        for item in items
    ]
    heading = gettext(language, _WORDS["logs_on_cause"])
    body = "\n".join(f"- {line}" for line in lines)
    return answer.model_copy(
        update={
            "text": f"{answer.text}\n\n{heading}:\n{body}",
            "synthesis": answer.synthesis.model_copy(update={"log_bearing": lines}),
        }
    )


def _led_by_log(answer: Answer, lead: str) -> str:
    """The answer's text with its "not established" line replaced by the log line's lead."""
    assert answer.synthesis is not None
    led = answer.model_copy(
        update={"synthesis": answer.synthesis.model_copy(update={"log_lead": lead})}
    )
    before, after = report_of(answer), report_of(led)
    if before is None or after is None:
        return answer.text
    old, new = headline(before, answer.language), headline(after, answer.language)
    return answer.text.replace(old, new, 1) if old in answer.text else f"{new}\n\n{answer.text}"


def _decided(answer: Answer, decision: StrategyDecision, assumptions: list[str]) -> Answer:
    """The answer labelled with the decision that chose its path (and any assumptions)."""
    answer = answer.model_copy(
        update={
            "strategy": decision.strategy,
            "decision": decision,
            "reason": decision.reason,
            "assumptions": assumptions,
            "language": as_language(decision.language),
        }
    )
    return _with_assumptions(answer) if assumptions else answer


def _deep_pending_note(answer: Answer, language: str) -> Answer:
    """Deep analysis needs the hypothesis tree; until it runs, say so on the quick answer."""
    note = gettext(language, _WORDS["pending_note"])
    return answer.model_copy(update={"text": f"{note}\n\n{answer.text}"})


def _with_assumptions(answer: Answer) -> Answer:
    reason = gettext(answer.language, _WORDS["assumed"])
    if answer.uncertainty_reason:
        reason = f"{answer.uncertainty_reason}; {reason}"
    return answer.model_copy(
        update={"confidence": min(answer.confidence, 0.6), "uncertainty_reason": reason}
    )
