"""AlertInvestigator: an alert's analysis, its goal and parameters known beforehand.

An alert mapped to a runbook needs no strategy decision, no clarification and no session:
its `Investigation` says what to look at, and the deep path looks (the same events and the
same `Answer` as a question's). An alert no runbook fits gets what changed around the parts
its labels name, as candidates.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from reasoning_core.answers.deep_path import DeepPath
from reasoning_core.answers.fixed import no_llm_answer
from reasoning_core.asking.condition import ConditionReader, with_condition
from reasoning_core.asking.enrichment import AnswerEnricher
from reasoning_core.asking.names import known_names, linked_names
from reasoning_core.asking.outcome import deep_outcome, finished
from reasoning_core.changes.neighbourhood import labelled_subject, subject_of
from reasoning_core.events import AnswerEvent, Event, ReasoningStartedEvent
from reasoning_core.i18n import N_, gettext
from reasoning_core.llm.pseudonyms import begin_question
from reasoning_core.models import Answer, Language, Question, StrategyDecision, Usage
from reasoning_core.ports.alerts import AlertCondition
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.understanding.catalogue import EntityCatalogue
from reasoning_core.understanding.parse import understand

_THINKING = N_("Thinking…")


@dataclass(frozen=True, kw_only=True)
class Investigation:
    """What an alert asks to have analysed.

    :param question: the alert's question (its text is the goal), who asks and the job key
    :param parameters: the runbook's parameters, from the alert's labels
    :param language: the language of the report
    :param runbook: the runbook the alert mapping chose (None: matched by the question)
    :param onset: the alert's start, where the logs' news begins (None: the last minutes)
    :param condition: the rule's expression and the alert's labels: re-read when the
        report is written, its symptom line in the alert's own terms (asking/condition.py)
    """

    question: Question
    parameters: Mapping[str, str]
    language: Language
    runbook: str | None = None
    onset: datetime | None = None
    condition: AlertCondition | None = None


class AlertInvestigator:
    """Runs an `Investigation` on the deep path, or scans around an alert no runbook fits.

    :param deep: the deep path (None: an investigation answers that no model is configured)
    :param enricher: adds what changed and what the logs say to the report
    :param catalogue: the data's names, which the question is linked against
    :param conditions: re-reads an alert's condition (None: no Prometheus)
    """

    def __init__(
        self,
        *,
        deep: DeepPath | None,
        enricher: AnswerEnricher,
        catalogue: EntityCatalogue | None,
        conditions: ConditionReader | None = None,
    ) -> None:
        self._deep = deep
        self._enricher = enricher
        self._catalogue = catalogue
        self._conditions = conditions

    async def investigate(self, investigation: Investigation) -> AsyncIterator[Event]:
        """The events of the analysis; the last is the `answer`."""
        question, language = investigation.question, investigation.language
        known = await known_names(self._catalogue)
        request = understand(question.text, known, language=language)
        begin_question(linked_names(request, known))
        decision = StrategyDecision(
            strategy="deep",
            confidence=1.0,
            reason="investigation",
            restated_goal=question.text,
            language=language,
        )
        yield ReasoningStartedEvent(message=gettext(language, _THINKING))
        if self._deep is None:
            yield finished(no_llm_answer(language), Usage())
            return
        ctx = PlanningContext(
            question=question.text,
            goal=question.text,
            language=language,
            user_id=question.user_id,
            parameters=dict(investigation.parameters),
            request=request,
            runbook=investigation.runbook,
        )
        run = self._deep.run(
            ctx, decision, user_id=question.user_id, chat_id=question.chat_id, key=question.key
        )
        steps = deep_outcome(
            run,
            decision=decision,
            enricher=self._enricher,
            subject=subject_of(investigation.parameters),
            onset=investigation.onset,
            usage=Usage(),
            assumptions=[],
        )
        async for event in steps:
            yield (
                await self._with_condition(event, investigation)
                if isinstance(event, AnswerEvent)
                else event
            )

    async def _with_condition(
        self, event: AnswerEvent, investigation: Investigation
    ) -> AnswerEvent:
        """The report's symptom line in the alert's own terms: its condition re-read now
        and since the alert began (holding, or resolved)."""
        condition = investigation.condition
        if condition is None or self._conditions is None or event.answer.synthesis is None:
            return event
        reading = await self._conditions.read(condition, onset=investigation.onset)
        if reading is None:
            return event
        return event.model_copy(update={"answer": with_condition(event.answer, reading)})

    async def scan_around(
        self, labels: Mapping[str, str], *, onset: datetime | None, language: Language
    ) -> Answer | None:
        """What changed around an alert no runbook fits, as candidates (never a cause): the
        change scan of what its labels name (`instance`, `job`, `service`, `pod`) before
        `onset` (the alert's start). None when no scanner is wired, the labels name nothing
        Prometheus scrapes, or the scan failed."""
        return await self._enricher.candidates(labelled_subject(labels), language, onset=onset)
