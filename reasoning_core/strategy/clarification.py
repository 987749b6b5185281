"""Clarifying questions: asked one at a time, stored so they survive a restart.

A clarify decision opens a `PendingClarification`; each answer (typed or a
button) is appended; when every question has an answer, the goal plus the
answers goes back through strategy selection. After `max_rounds` rounds the
service stops asking and answers with its best understanding, saying which
assumptions it made.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import (
    Answer,
    ClarificationPrompt,
    ClarifyingQuestion,
    Question,
    StrategyDecision,
    as_language,
)
from reasoning_core.ports import ClarificationStore, PendingClarification

MAX_ROUNDS = 2
#: Longer answers are trimmed: a clarification is a detail, not a new essay.
MAX_ANSWER_CHARS = 500

_TEXTS = {
    "intro": N_("I need a detail before I start ({n} of {total}):"),
    "empty": N_("I didn't catch an answer — please pick an option or type a short reply."),
    "assumed": N_("I asked twice and will go with what I understood. Assumptions:"),
    "unanswered": N_("not specified"),
}


def wording(key: str, language: str) -> str:
    """One of the clarification's own texts in `language`."""
    return gettext(language, _TEXTS[key])


class Clarifier:
    """Opens, advances and renders pending clarifications over a `ClarificationStore`."""

    def __init__(
        self,
        store: ClarificationStore,
        *,
        ttl_sec: int,
        max_rounds: int = MAX_ROUNDS,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._ttl = timedelta(seconds=ttl_sec)
        self._max_rounds = max_rounds
        self._clock = clock

    @property
    def max_rounds(self) -> int:
        return self._max_rounds

    async def active(self, question: Question) -> PendingClarification | None:
        return await self._store.active(question.chat_id, question.user_id, now=self._clock())

    async def get(self, clarification_id: str) -> PendingClarification | None:
        return await self._store.get(clarification_id)

    async def cancel(self, *, chat_id: int, user_id: int) -> bool:
        return await self._store.cancel(chat_id, user_id, now=self._clock())

    async def close(self, pending: PendingClarification) -> None:
        await self._store.close(pending.id)

    async def open(self, question: Question, decision: StrategyDecision) -> PendingClarification:
        """A new clarification for `question` (the newest one in a chat wins)."""
        now = self._clock()
        pending = PendingClarification(
            chat_id=question.chat_id,
            user_id=question.user_id,
            question=question.text,
            decision=decision,
            questions=list(decision.questions),
            created_at=now,
            expires_at=now + self._ttl,
        )
        await self._store.save(pending)
        return pending

    async def next_round(
        self, pending: PendingClarification, decision: StrategyDecision
    ) -> PendingClarification:
        return await self._store.next_round(
            pending.id,
            decision=decision,
            questions=decision.questions,
            expires_at=self._clock() + self._ttl,
            now=self._clock(),
        )

    async def accept(self, pending: PendingClarification, text: str) -> PendingClarification:
        """Record the answer to the current question; returns the updated clarification."""
        return await self._store.add_answer(pending.id, trim_answer(text), now=self._clock())


def trim_answer(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= MAX_ANSWER_CHARS:
        return text
    cut = text[:MAX_ANSWER_CHARS].rsplit(" ", 1)[0]
    return cut + "…"


def prompt_answer(pending: PendingClarification, *, note: str | None = None) -> Answer:
    """The clarify Answer showing the current (first unanswered) question."""
    decision = pending.decision
    current = pending.next_question or ClarifyingQuestion(text=decision.reason)
    index = len(pending.answers)
    total = max(len(pending.questions), 1)
    intro = wording("intro", decision.language).format(n=min(index + 1, total), total=total)
    text = "\n".join(part for part in (note, intro, current.text) if part)
    return Answer(
        strategy="clarify",
        text=text,
        confidence=decision.confidence,
        uncertainty_reason=decision.uncertainty_reason or decision.reason,
        reason=decision.reason,
        decision=decision,
        language=as_language(decision.language),
        clarification=ClarificationPrompt(
            clarification_id=pending.id,
            index=index,
            total=total,
            round=pending.round,
            text=current.text,
            options=current.options,
        ),
    )


def question_with_answers(pending: PendingClarification) -> str:
    """The original question and the answers alone (what to parse: the questions' own
    examples, like "e.g. cell 10001", are not the user's words)."""
    return " ".join([pending.question, *pending.answers])


def goal_with_answers(pending: PendingClarification) -> str:
    """The original question enriched with every question/answer pair so far."""
    pairs = [f"- {q.text} {a}" for q, a in zip(pending.questions, pending.answers, strict=False)]
    if not pairs:
        return pending.question
    return pending.question + "\n" + "\n".join(pairs)


def assumptions(pending: PendingClarification) -> list[str]:
    """What we take as given when we stop asking: each answer, or 'not specified'."""
    unanswered = wording("unanswered", pending.decision.language)
    result = []
    for index, q in enumerate(pending.questions):
        value = pending.answers[index] if index < len(pending.answers) else unanswered
        result.append(f"{q.text} → {value}")
    return result
