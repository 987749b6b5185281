"""The deep path of the service: a durable job growing a hypothesis tree.

The strategy decision (and any clarification) happens before the job is
queued; the job's events stream to the front end and its answer comes back
as the final event. Trees can be shown later, to their owner only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from reasoning_core.answers.deep_jobs import DeepJobRunner, Deliver
from reasoning_core.errors import NotFoundError
from reasoning_core.events import AnswerEvent, Event
from reasoning_core.i18n import N_, gettext
from reasoning_core.models import (
    Answer,
    ClarifyingQuestion,
    StrategyDecision,
    Tree,
    as_language,
)
from reasoning_core.ports import TreeStore
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.tree.render import render_tree_text
from reasoning_core.understanding.request import Request

QUEUED_TEXT = N_("Your deep analysis is queued; I'll send the report here when it is done.")
_NOT_FINISHED = N_("the analysis has not finished yet")


#: Guidance text for the LLM planner from matching runbooks: (parsed goal, language) -> text.
Guidance = Callable[[Request, str], str | None]
#: Details an analysis needs before it can start: (parsed goal, parameters) -> questions;
#: None when no runbook fits the goal.
MissingDetails = Callable[[Request, Mapping[str, Any]], Awaitable[list[ClarifyingQuestion] | None]]
#: The runbooks discovery switched off that would fit a question: (title, why it is off).
SwitchedOff = Callable[[Request], list[tuple[str, str]]]


class DeepPath:
    def __init__(
        self,
        *,
        runner: DeepJobRunner,
        trees: TreeStore,
        guidance: Guidance | None = None,
        missing_details: MissingDetails | None = None,
        switched_off: SwitchedOff | None = None,
    ) -> None:
        self._runner = runner
        self._trees = trees
        self._guidance = guidance
        self._missing_details = missing_details
        self._switched_off = switched_off

    def switched_off(self, request: Request) -> list[tuple[str, str]]:
        """The runbooks that would fit `request` but are off on this Prometheus, and why
        (the metrics it lacks, as `whytree doctor` says them)."""
        return self._switched_off(request) if self._switched_off is not None else []

    async def missing_details(self, ctx: PlanningContext) -> list[ClarifyingQuestion] | None:
        """What to ask before the analysis can run (e.g. which cell); [] if nothing; None
        when no runbook fits (or none is loaded)."""
        if self._missing_details is None:
            return None
        return await self._missing_details(ctx.parsed(), ctx.parameters)

    async def run(
        self,
        ctx: PlanningContext,
        decision: StrategyDecision,
        *,
        user_id: int,
        chat_id: int,
        key: str | None = None,
    ) -> AsyncIterator[Event]:
        """The job's events, then an `answer` (a "queued" note if another worker took it)."""
        if self._guidance is not None:
            guidance = self._guidance(ctx.parsed(), ctx.language)
            ctx = ctx.model_copy(update={"guidance": guidance})
        answer: Answer | None = None
        async for event in self._runner.submit(ctx, user_id=user_id, chat_id=chat_id, key=key):
            if isinstance(event, AnswerEvent):
                answer = event.answer
            else:
                yield event
        if answer is None:
            language = as_language(decision.language)
            answer = Answer(
                strategy="deep",
                text=gettext(language, QUEUED_TEXT),
                confidence=decision.confidence,
                uncertainty_reason=gettext(language, _NOT_FINISHED),
                language=language,
            )
        yield AnswerEvent(answer=answer)

    async def tree(self, tree_id: str, *, user_id: int | None) -> Tree | None:
        """The tree, or None if unknown or another user's.

        `user_id=None` is the operator (`whytree tree`), who may see any tree.
        """
        try:
            tree = await self._trees.load(tree_id)
        except NotFoundError:
            return None
        if user_id is not None and tree.user_id is not None and tree.user_id != user_id:
            return None  # never reveal that another user's tree exists
        return tree

    async def tree_lines(self, tree_id: str, *, user_id: int | None) -> list[str] | None:
        """The tree as indented text lines, or None if unknown or another user's."""
        tree = await self.tree(tree_id, user_id=user_id)
        return None if tree is None else render_tree_text(tree)

    async def resume_stale(self, deliver: Deliver) -> int:
        """Finish the jobs a crashed process left running; `deliver` sends each answer."""
        return await self._runner.resume_stale(deliver)
