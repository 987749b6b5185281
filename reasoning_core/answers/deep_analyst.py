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

from reasoning_core.errors import NotFoundError, OutsideDataError, ReasoningError, StoreError
from reasoning_core.explore.budgets import Budgets
from reasoning_core.explore.explorer import Explorer
from reasoning_core.explore.policy import ExplorationPolicy
from reasoning_core.models import Answer, Event, Language, Synthesis, Tree, as_language
from reasoning_core.planners.contract import PlanningContext
from reasoning_core.ports import ChatModel, Planner, TreeStore
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

log = logging.getLogger(__name__)

_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "started": "Deep analysis started · tree {tree}",
        "resumed": "Deep analysis resumed · tree {tree}",
        "done": "Deep analysis done",
        "failed": "Deep analysis failed",
        "no_data": "No data",
        "no_tree": "there is no tree {tree} of yours",
        "no_start": "the analysis could not start: {error}",
        "broke": "the analysis failed: {error}",
        "sorry": "Sorry — I could not finish the deep analysis: {why}.",
        "reason": "deep analysis of competing hypotheses",
    },
    "ru": {
        "started": "Глубокий анализ начат · дерево {tree}",
        "resumed": "Глубокий анализ продолжен · дерево {tree}",
        "done": "Глубокий анализ завершён",
        "failed": "Глубокий анализ не удался",
        "no_data": "Нет данных",
        "no_tree": "у вас нет дерева {tree}",
        "no_start": "анализ не удалось начать: {error}",
        "broke": "анализ прервался: {error}",
        "sorry": "Не удалось завершить глубокий анализ: {why}.",
        "reason": "глубокий анализ конкурирующих гипотез",
    },
}


def _words(language: str) -> dict[str, str]:
    return _WORDS["ru" if language == "ru" else "en"]


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
        concurrency: int = 4,
        clock: Callable[[], float] = time.monotonic,
        reflection: ReflectionSettings | None = None,
        critic: ChatModel | None = None,
    ) -> None:
        self._store = tree_store
        #: None or disabled: the plan runs to the end as planned (no checkpoints).
        self._reflection = reflection
        #: The LLM asked for a critique at checkpoints (None: the numbers decide alone).
        self._critic = critic
        self._planner = planner
        self._fallback = fallback_planner
        self._tools = dict(tools)
        self._budgets = budgets or Budgets()
        self._policy = policy or ExplorationPolicy()
        self._concurrency = concurrency
        self._clock = clock

    async def run(
        self, ctx: PlanningContext, *, user_id: int, chat_id: int, tree_id: str | None = None
    ) -> AsyncIterator[Event]:
        """Analyse (or, with `tree_id`, continue analysing) and end with an answer event."""
        manager = TreeManager(store=self._store, max_depth=self._budgets.depth_limit)
        words, language = _words(ctx.language), as_language(ctx.language)
        try:
            if tree_id is None:
                tree = await manager.create_tree(
                    ctx.goal or ctx.question, user_id=user_id, chat_id=chat_id
                )
            else:
                tree = await manager.load_tree(tree_id, user_id=user_id)
        except NotFoundError:
            why = words["no_tree"].format(tree=tree_id)
            async for event in _failed(why, tree_id=None, language=language):
                yield event
            return
        except ReasoningError as e:
            why = words["no_start"].format(error=e)
            async for event in _failed(why, tree_id=None, language=language):
                yield event
            return
        verb = "started" if tree_id is None else "resumed"
        yield Event(
            kind="tree_created",
            message=words[verb].format(tree=tree.id),
            data={"tree_id": tree.id, "resumed": tree_id is not None},
        )
        explorer = self._explorer(manager, ctx)
        try:
            async for event in explorer.explore(ctx):
                yield event
        except OutsideDataError as e:  # not a failure: the answer says which period there is
            await _close(manager, "completed")
            answer = _outside_data(str(e), tree.id, language)
            yield Event(kind="answer", message=words["no_data"], answer=answer)
            return
        except ReasoningError as e:
            log.warning("deep analysis of tree %s failed: %s", tree.id, e)
            await _close(manager, "failed")
            why = words["broke"].format(error=e)
            async for event in _failed(why, tree_id=tree.id, language=language):
                yield event
            return
        assert explorer.synthesis is not None, "explore() always concludes"
        await _close(manager, "completed")
        reflector = explorer.reflector
        answer = deep_answer(
            explorer.synthesis,
            tree_id=tree.id,
            planner=explorer.planner_name,
            language=ctx.language,
            tree=manager.tree,
            question=reflector.question if reflector is not None else None,
        )
        yield Event(kind="answer", message=words["done"], answer=answer)

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
            concurrency=self._concurrency,
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
    synthesis = synthesis.model_copy(update={"uncertainty_reason": reason})
    report = build_report(synthesis, tree_id=tree_id, planner=planner, language=language)
    uncertainty = reason or report.uncertainty
    text = render_report(report, language)
    if unsettled is not None:
        shown = [*report.evidence, *report.not_checked, *report.recommendations]
        text += "\n\n" + render_not_established(unsettled, language=language, shown=shown)
    return Answer(
        strategy="deep",
        text=text,
        confidence=synthesis.confidence,
        uncertainty_reason=uncertainty,
        reason=_words(language)["reason"],
        tree_id=tree_id,
        synthesis=synthesis,
        planner=planner,
        language=as_language(language),
    )


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


async def _failed(why: str, *, tree_id: str | None, language: Language) -> AsyncIterator[Event]:
    """The failure as an error event and an answer; `why` is an internal reason (the
    planner's or the store's message), shown as it came."""
    words = _words(language)
    yield Event(kind="error", message=why, data={"tree_id": tree_id})
    answer = Answer(
        strategy="deep",
        text=words["sorry"].format(why=why),
        confidence=0.0,
        uncertainty_reason=why,
        tree_id=tree_id,
        error="deep_failed",
        language=language,
    )
    yield Event(kind="answer", message=words["failed"], answer=answer)
