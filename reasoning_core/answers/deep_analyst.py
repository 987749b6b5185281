"""DeepAnalyst: the deep path, from a planning context to a confidence-tagged answer.

It creates the tree (or loads a saved one to continue it), lets an `Explorer`
grow and conclude it, closes the tree and ends with one ``answer`` event
carrying the plain-text report, the synthesis and the tree id. Failures of the
planner or the database end in an ``error`` event and an answer that says what
went wrong, never in an exception for the front end.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping

from reasoning_core.answers.fixed import deep_failure_answer, unanswerable_answer
from reasoning_core.answers.reply_to import reply_to
from reasoning_core.error_ids import new_error_id
from reasoning_core.errors import (
    NotFoundError,
    OutsideDataError,
    ReasoningError,
    StoreError,
    UnanswerableError,
)
from reasoning_core.events import AnswerEvent, ErrorEvent, Event, TreeCreatedEvent
from reasoning_core.explore.budgets import Budgets
from reasoning_core.explore.explorer import Explorer
from reasoning_core.explore.policy import ExplorationPolicy
from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Answer, Language, Synthesis, Tree, as_language
from reasoning_core.ports import ChatModel, Planner, TreeEvent, TreeJournal, TreeStore
from reasoning_core.ports.planning import MODEL_KEY_PREFIX, PlanningContext
from reasoning_core.reflection.reflector import ReflectionSettings, Reflector
from reasoning_core.reflection.report import (
    apply_not_established,
    not_established,
    render_not_established,
)
from reasoning_core.reflection.uncertainty import UncertaintySources, uncertainty_reason
from reasoning_core.tools.base import Tool
from reasoning_core.tree.manager import TreeManager
from reasoning_core.tree.report import build_report
from reasoning_core.tree.wording import render_report
from reasoning_core.understanding.request import Request

log = logging.getLogger(__name__)

#: Events kept in the tree's journal: what reflection found, decided and revised.
JOURNALED = frozenset({"reflection", "plan_revised"})

_WORDS: dict[str, str] = {
    "started": N_("Deep analysis started · tree {tree}"),
    "resumed": N_("Deep analysis resumed · tree {tree}"),
    "done": N_("Deep analysis done"),
    "failed": N_("Deep analysis failed"),
    "no_data": N_("No data"),
    "no_tree": N_("there is no tree {tree} of yours"),
    "no_start": N_("the analysis could not start: {error}"),
    "broke": N_("the analysis failed: {error}"),
    "reason": N_("deep analysis of competing hypotheses"),
    "model_part": N_(
        "From the language model: the hypotheses {titles}, their checks and readings."
    ),
}


class DeepAnalyst:
    """Runs deep analyses with one planner (and an optional fallback) over the tools."""

    def __init__(
        self,
        *,
        tree_store: TreeStore,
        planner: Planner,
        tools: Mapping[str, Tool],
        fallback_planner: Planner | None = None,
        budgets: Budgets | None = None,
        policy: ExplorationPolicy | None = None,
        model_concurrency: int = 4,
        tool_concurrency: int = 8,
        clock: Callable[[], float] = time.monotonic,
        reflection: ReflectionSettings | None = None,
        critic: ChatModel | None = None,
        journal: TreeJournal | None = None,
    ) -> None:
        self._store = tree_store
        #: Where reflection events are kept for the analysis page (None: not kept).
        self._journal = journal
        #: None or disabled: the plan runs to the end as planned (no checkpoints).
        self._reflection = reflection
        #: The LLM asked for a critique at checkpoints (None: the numbers decide alone).
        self._critic = critic
        self._planner = planner
        self._fallback = fallback_planner
        self._tools = dict(tools)
        self._budgets = budgets or Budgets()
        self._policy = policy or ExplorationPolicy()
        self._model_concurrency = model_concurrency
        self._tool_concurrency = tool_concurrency
        self._clock = clock

    async def run(
        self, ctx: PlanningContext, *, user_id: int, chat_id: int, tree_id: str | None = None
    ) -> AsyncIterator[Event]:
        """Analyse (or, with `tree_id`, continue analysing) and end with an answer event."""
        manager = TreeManager(store=self._store, max_depth=self._budgets.tree_depth)
        language = as_language(ctx.language)
        try:
            tree = await self._open(
                manager, ctx, user_id=user_id, chat_id=chat_id, tree_id=tree_id
            )
        except ReasoningError as e:
            why = (
                gettext(language, _WORDS["no_tree"]).format(tree=tree_id)
                if isinstance(e, NotFoundError)
                else gettext(language, _WORDS["no_start"]).format(error=e)
            )
            async for event in _failed(why, tree_id=None, language=language):
                yield event
            return
        verb = "started" if tree_id is None else "resumed"
        yield TreeCreatedEvent(
            message=gettext(language, _WORDS[verb]).format(tree=tree.id),
            tree_id=tree.id,
            resumed=tree_id is not None,
        )
        async for event in self._grow(manager, tree.id, ctx, language):
            yield event

    async def _grow(
        self, manager: TreeManager, tree_id: str, ctx: PlanningContext, language: Language
    ) -> AsyncIterator[Event]:
        """The explorer's events, then the answer: the report, or what stopped it."""
        explorer = self._explorer(manager, ctx)
        try:
            async for event in explorer.explore(ctx):
                if event.kind in JOURNALED:
                    await self._record(tree_id, event)
                yield event
        except OutsideDataError as e:  # not a failure: the answer says which period there is
            await _close(manager, "completed")
            answer = _outside_data(str(e), tree_id, language)
            yield AnswerEvent(message=gettext(language, _WORDS["no_data"]), answer=answer)
            return
        except ReasoningError as e:
            log.warning("deep analysis of tree %s failed: %s", tree_id, e)
            await _close(manager, "failed")
            async for event in _stopped(e, tree_id=tree_id, language=language):
                yield event
            return
        assert explorer.synthesis is not None, "explore() always concludes"
        await _close(manager, "completed")
        reflector = explorer.reflector
        answer = deep_answer(
            explorer.synthesis,
            tree_id=tree_id,
            planner=explorer.planner_name,
            language=ctx.language,
            tree=manager.tree,
            question=reflector.question if reflector is not None else None,
            request=ctx.request,
        )
        yield AnswerEvent(message=gettext(language, _WORDS["done"]), answer=answer)

    async def _open(
        self,
        manager: TreeManager,
        ctx: PlanningContext,
        *,
        user_id: int,
        chat_id: int,
        tree_id: str | None,
    ) -> Tree:
        """A new tree for the goal, or the user's saved one to continue."""
        if tree_id is None:
            goal = ctx.goal or ctx.question
            return await manager.create_tree(goal, user_id=user_id, chat_id=chat_id)
        return await manager.load_tree(tree_id, user_id=user_id)

    async def _record(self, tree_id: str, event: Event) -> None:
        """Keep a reflection event in the tree's journal; a failure only loses the entry."""
        if self._journal is None:
            return
        data = {k: v for k, v in event.payload().items() if k != "tree_id"}
        entry = TreeEvent(kind=event.kind, message=event.message, data=data)
        try:
            await self._journal.record(tree_id, entry)
        except StoreError as e:
            log.warning("could not journal a %s event of tree %s: %s", event.kind, tree_id, e)

    def _explorer(self, manager: TreeManager, ctx: PlanningContext) -> Explorer:
        settings = self._reflection
        reflector = None
        if settings is not None and settings.enabled:
            reflector = Reflector(
                settings=settings,
                model=self._critic,
                goal=ctx.goal or ctx.question,
                language=ctx.language,
                revisions_used=manager.tree.revision,
            )
        return Explorer(
            manager=manager,
            planner=self._planner,
            fallback_planner=self._fallback,
            tools=self._tools,
            budgets=self._budgets,
            policy=self._policy,
            model_concurrency=self._model_concurrency,
            tool_concurrency=self._tool_concurrency,
            clock=self._clock,
            reflector=reflector,
            language=ctx.language,
        )


def deep_answer(
    synthesis: Synthesis,
    *,
    tree_id: str | None,
    planner: str | None,
    language: str = "en",
    tree: Tree | None = None,
    question: str | None = None,
    request: Request | None = None,
) -> Answer:
    """The answer of a finished analysis: the plain-text report (in `language`) + synthesis.

    With the tree, an analysis that established no cause gets the "not established"
    report (what was checked, ruled out, missing, which data would settle it, a
    question for the user), and the uncertainty reason names the real causes.
    """
    unsettled = (
        not_established(tree, synthesis, language=language, question=question) if tree else None
    )
    if unsettled is not None and tree is not None:
        synthesis = apply_not_established(synthesis, unsettled, tree, language=language)
    sources = UncertaintySources(synthesis=synthesis, tree=tree, language=language)
    reason = uncertainty_reason(
        synthesis.confidence, sources, existing=synthesis.uncertainty_reason
    )
    reply = reply_to(request, synthesis, tree, language)
    synthesis = synthesis.model_copy(update={"uncertainty_reason": reason, "reply": reply})
    report = build_report(synthesis, tree_id=tree_id, planner=planner, language=language)
    uncertainty = reason or report.uncertainty
    text = render_report(report, language)
    if unsettled is not None:
        shown = [*report.evidence, *report.not_checked, *report.recommendations]
        text += "\n\n" + render_not_established(unsettled, language=language, shown=shown)
    if tree is not None and (titles := model_hypotheses(tree)):
        text += "\n\n" + gettext(language, _WORDS["model_part"]).format(
            titles="; ".join(f"«{t}»" for t in titles)
        )
    return Answer(
        strategy="deep",
        text=text,
        confidence=synthesis.confidence,
        uncertainty_reason=uncertainty,
        reason=gettext(language, _WORDS["reason"]),
        tree_id=tree_id,
        synthesis=synthesis,
        planner=planner,
        language=as_language(language),
    )


def model_hypotheses(tree: Tree) -> list[str]:
    """The titles of the hypotheses a language model added beside a runbook's."""
    return [
        node.title
        for node in tree.nodes.values()
        if node.node_type == "hypothesis"
        and str(node.context.get("key", "")).startswith(MODEL_KEY_PREFIX)
    ]


async def _close(manager: TreeManager, status: str) -> None:
    try:
        await manager.finish("completed" if status == "completed" else "failed")
    except StoreError as e:
        log.error("could not close tree %s (the answer is still sent): %s", manager.tree.id, e)


def _outside_data(text: str, tree_id: str, language: Language) -> Answer:
    return Answer(
        strategy="deep",
        text=text,
        confidence=0.95,
        tree_id=tree_id,
        error="outside_data",
        language=language,
    )


async def _stopped(
    error: ReasoningError, *, tree_id: str, language: Language
) -> AsyncIterator[Event]:
    """An analysis the question itself stopped (no data, no runbook) says why; any other
    failure gets an error id (`_failed`)."""
    if isinstance(error, UnanswerableError):
        answer = unanswerable_answer(str(error), language=language, tree_id=tree_id)
        yield ErrorEvent(message=str(error), tree_id=tree_id)
        yield AnswerEvent(message=gettext(language, _WORDS["failed"]), answer=answer)
        return
    why = gettext(language, _WORDS["broke"]).format(error=error)
    async for event in _failed(why, tree_id=tree_id, language=language):
        yield event


async def _failed(why: str, *, tree_id: str | None, language: Language) -> AsyncIterator[Event]:
    """The failure in the log under an error id; the user gets the id and what to do."""
    error_id = new_error_id()
    log.error("deep analysis failed (error %s, tree %s): %s", error_id, tree_id, why)
    yield ErrorEvent(
        message=f"deep analysis failed (error {error_id})", tree_id=tree_id, error_id=error_id
    )
    answer = deep_failure_answer(error_id, language=language, tree_id=tree_id)
    yield AnswerEvent(message=gettext(language, _WORDS["failed"]), answer=answer)
