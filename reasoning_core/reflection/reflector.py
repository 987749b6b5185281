"""Reflection: the "wait, let me reconsider" of a good analyst, for one deep analysis.

A `Reflector` watches the tree while the explorer grows it. At each
checkpoint (reflection_checkpoints, reflection_tracker) it decides from the
numbers (reflection_decision), then asks the LLM's critique when there is a
model and the numbers leave room (reflection_critique). The explorer acts on
the `Decision`: continue, retry checks another way, or revise the plan with
`revision_context` (reflection_revision). What it did is told by the events
``reflection`` and ``plan_revised`` (counted by the metrics as
reflection_triggered_total and plan_revised_total); an analysis that ends
without a winner gets the "not established" report (reflection_report), and
every low-confidence answer an uncertainty reason (reflection_uncertainty).

The modules, in the order of a reflection::

    reflection_checkpoints   pure detection over a Tree (A failed, B periodic,
                             C no winner / close race, D contradiction)
    reflection_tracker       which checkpoints are new since the last look
    reflection_decision      continue | retry | revise from the numbers
    reflection_critique      the LLM's critique, validated and bounded
    reflection_revision      revision limit, refused repeats, "failed because ..."
    reflection_text          checked / ruled out / missing / to settle it
    reflection_report        the "not established" report
    reflection_uncertainty   uncertainty_reason from the real causes
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from reasoning_core.events import PlanRevisedEvent, ReflectionEvent
from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Tree, Usage
from reasoning_core.ports import ChatModel
from reasoning_core.ports.planning import HypothesisProposal, PlanningContext
from reasoning_core.reflection.checkpoints import DEFAULT_REFLECTION_EVERY, Checkpoint
from reasoning_core.reflection.critique import apply_critique, ask_critique
from reasoning_core.reflection.decision import Decision, RetryPlan, decide
from reasoning_core.reflection.revision import (
    DEFAULT_MAX_PLAN_REVISIONS,
    FAILURE_PREFIX,
    RevisionLedger,
    failure_reason,
    revision_context,
    screen,
)
from reasoning_core.reflection.tracker import CheckpointTracker

_MESSAGE_CHARS = 240

_WORDS: dict[str, str] = {
    "reflection": N_("Reflection ({triggers}): {what} — {reason}"),
    "checkpoint": N_("checkpoint"),
    "check_failed": N_("check failed"),
    "periodic": N_("periodic"),
    "no_winner": N_("no winner"),
    "close_race": N_("close race"),
    "contradiction": N_("contradiction"),
    "continue": N_("continue"),
    "retry": N_("retry"),
    "revise": N_("revise the plan"),
}


class ReflectionSettings(BaseModel):
    """MAX_PLAN_REVISIONS and REFLECTION_EVERY, and whether to reflect at all."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = True
    max_plan_revisions: int = Field(default=DEFAULT_MAX_PLAN_REVISIONS, ge=0, le=5)
    reflection_every: int = Field(default=DEFAULT_REFLECTION_EVERY, ge=0, le=100)


class Reflection(BaseModel):
    """One reflection: the checkpoints that triggered it and what was decided."""

    checkpoints: list[Checkpoint]
    decision: Decision
    usage: Usage = Field(default_factory=Usage)


class Reflector:
    """Checkpoints, decisions and revision bookkeeping of one analysis (single use)."""

    def __init__(
        self,
        *,
        settings: ReflectionSettings | None = None,
        model: ChatModel | None = None,
        goal: str = "",
        language: str = "en",
        revisions_used: int = 0,
    ) -> None:
        self.settings = settings or ReflectionSettings()
        self._model = model
        self._goal = goal
        self._language = language
        self._tracker = CheckpointTracker(every=self.settings.reflection_every)
        self.ledger = RevisionLedger(
            max_revisions=self.settings.max_plan_revisions, used=revisions_used
        )
        #: Checks already retried (each is retried at most once).
        self.retried: set[str] = set()
        #: The last clarifying question a reflection suggested (for the final report).
        self.question: str | None = None
        #: Reflections and revisions so far (the events' counts, for tests and benchmarks).
        self.reflections = 0
        self.revisions = 0

    def checkpoints(self, tree: Tree) -> list[Checkpoint]:
        """The checkpoints reached since the last call ([] when reflection is off)."""
        if not self.settings.enabled:
            return []
        return self._tracker.observe(tree)

    async def reflect(
        self,
        tree: Tree,
        checkpoints: Sequence[Checkpoint],
        *,
        may_ask: Callable[[], bool] = lambda: True,
    ) -> Reflection:
        """Decide at these checkpoints: numbers first, then the critique where allowed.

        `may_ask` is asked before the critique's LLM call (a budget may refuse it).
        """
        left = self.ledger.remaining
        decision = decide(
            tree, checkpoints, revisions_left=left, retried=self.retried, language=self._language
        )
        usage = Usage()
        if self._model is not None and not decision.firm and may_ask():
            critique, usage = await ask_critique(
                self._model,
                tree,
                checkpoints,
                decision,
                goal=self._goal,
                revisions_left=left,
                retried=self.retried,
            )
            decision = apply_critique(
                tree, decision, critique, revisions_left=left, retried=self.retried
            )
        self.retried.update(r.node_id for r in decision.retries)
        self.reflections += 1
        if decision.question:
            self.question = decision.question
        return Reflection(checkpoints=list(checkpoints), decision=decision, usage=usage)

    def start_revision(
        self, ctx: PlanningContext, tree: Tree, *, reason: str | None = None
    ) -> PlanningContext | None:
        """The planning context of a revision, or None when no revision is left.

        The attempt is counted at once, so a revision that brings nothing new
        still uses up the limit.
        """
        if not self.ledger.take():
            return None
        return revision_context(ctx, tree, reason=reason or failure_reason(tree))

    def screen(
        self, tree: Tree, proposals: Sequence[HypothesisProposal]
    ) -> tuple[list[HypothesisProposal], list[tuple[HypothesisProposal, str]]]:
        """A revision's proposals without repeats of earlier hypotheses (and the refused ones)."""
        return screen(tree, proposals)

    def revised(self) -> None:
        """Count a revision that grew new hypotheses."""
        self.revisions += 1


def reflection_message(reflection: Reflection, language: str = "en") -> str:
    """One line for the live progress: the triggers and the decision, in `language`."""
    decision = reflection.decision
    triggers = ", ".join(gettext(language, _WORDS[t]) for t in decision.triggers) or gettext(
        language, _WORDS["checkpoint"]
    )
    line = gettext(language, _WORDS["reflection"]).format(
        triggers=triggers, what=gettext(language, _WORDS[decision.action]), reason=decision.reason
    )
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 1] + "…"


def plan_revised_message(
    revision: int, failure: str, added: Sequence[str], language: str = "en"
) -> str:
    """One line for the live progress: the revision, why, and what is new.

    The failure is the planner's prompt text (English); a Russian line leaves it out.
    """
    new = ", ".join(added)
    why = failure.split(". ", maxsplit=1)[0]
    line = gettext(language, "Plan revised ({revision}): {prefix} {why}; new: {new}").format(
        revision=revision, prefix=FAILURE_PREFIX, why=why, new=new
    )
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 1] + "…"


def reflection_event(reflection: Reflection) -> ReflectionEvent:
    """The ``reflection`` event (reflection_triggered_total counts these)."""
    decision = reflection.decision
    return ReflectionEvent(
        message=reflection_message(reflection),
        triggers=list(decision.triggers),
        action=decision.action,
        reason=decision.reason,
        source=decision.source,
        retries=[r.model_dump(mode="json") for r in decision.retries],
        question=decision.question,
        critique=decision.critique,
        checkpoints=[c.message for c in reflection.checkpoints],
    )


def plan_revised_event(
    revision: int, failure: str, added: Sequence[str], *, set_aside: Sequence[str] = ()
) -> PlanRevisedEvent:
    """The ``plan_revised`` event (plan_revised_total counts these)."""
    return PlanRevisedEvent(
        message=plan_revised_message(revision, failure, added),
        revision=revision,
        previous_failure=failure,
        added=list(added),
        set_aside=list(set_aside),
    )


__all__ = [
    "Checkpoint",
    "Decision",
    "Reflection",
    "ReflectionSettings",
    "Reflector",
    "RetryPlan",
    "plan_revised_event",
    "reflection_event",
]
