"""How every path ends: the answer labelled with the decision that chose its path, its usage
merged, its uncertainty said (below 0.7, from the real causes), and what the recorder keeps.
A deep analysis's answer is also enriched with what changed and what the logs say."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reasoning_core.asking.enrichment import AnswerEnricher
from reasoning_core.events import AnswerEvent, Event
from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Answer, StrategyDecision, Usage, as_language
from reasoning_core.reflection.uncertainty import with_uncertainty

_ASSUMED = N_("answered on assumptions, since the question stayed ambiguous")


@dataclass(frozen=True)
class Done:
    """What an answer was about, for the recorder: the goal and the parameters a later
    "like yesterday" may reuse."""

    goal: str
    parameters: dict[str, Any]


def finished(answer: Answer, usage: Usage, done: Done | None = None) -> AnswerEvent:
    """The final event of a path: `usage` added to the answer's, the uncertainty said."""
    merged = with_uncertainty(answer.model_copy(update={"usage": answer.usage + usage}))
    if done is None:
        return AnswerEvent(answer=merged)
    return AnswerEvent(answer=merged, goal=done.goal, parameters=done.parameters)


def decided(answer: Answer, decision: StrategyDecision, assumptions: list[str]) -> Answer:
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


async def deep_outcome(
    run: AsyncIterator[Event],
    *,
    decision: StrategyDecision,
    enricher: AnswerEnricher,
    subject: Mapping[str, str],
    onset: datetime | None,
    usage: Usage,
    assumptions: list[str],
    done: Done | None = None,
) -> AsyncIterator[Event]:
    """A deep analysis's events passed on, its answer labelled with `decision`, enriched
    (what changed around `subject`, the logs since `onset`) and finished."""
    async for event in run:
        if isinstance(event, AnswerEvent):
            answer = decided(event.answer, decision, assumptions)
            answer = await enricher.deep_report(answer, subject=subject, onset=onset)
            yield finished(answer, usage, done)
        else:
            yield event


def _with_assumptions(answer: Answer) -> Answer:
    reason = gettext(answer.language, _ASSUMED)
    if answer.uncertainty_reason:
        reason = f"{answer.uncertainty_reason}; {reason}"
    return answer.model_copy(
        update={"confidence": min(answer.confidence, 0.6), "uncertainty_reason": reason}
    )
