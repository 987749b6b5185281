"""Which details to ask for: only what cannot be defaulted.

When a runbook fits a diagnosis, its missing parameters (which cell: unknown, several, a
site's cells) are the only clarifying questions, and a runbook with everything it needs
goes deep at once. Without a model, a quick question a runbook's words fit is about the
system and goes to the runbook too.
"""

from __future__ import annotations

from reasoning_core.answers.deep_path import DeepPath
from reasoning_core.models import ClarifyingQuestion, StrategyDecision
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.understanding.request import Request


async def require_details(
    decision: StrategyDecision,
    request: Request,
    ctx: PlanningContext,
    *,
    deep: DeepPath | None,
    has_model: bool,
) -> StrategyDecision:
    """`decision` with the runbook's questions, deep at once, or as it was.

    :param ctx: the analysis as it would be planned (for the runbooks' missing details)
    :param deep: the deep path (None: no runbooks to ask, the decision stands)
    :param has_model: a chat model answers quick questions and plans without a runbook
    """
    if decision.strategy == "quick" and not has_model:
        return await _fits_a_runbook(decision, request, ctx, deep)
    if decision.strategy not in ("deep", "clarify") or deep is None:
        return decision
    if decision.strategy == "clarify" and (
        request.intent != "diagnose" or decision.source == "llm"
    ):
        return decision  # the model's own question stands
    questions = await deep.missing_details(ctx)
    if questions is None and _the_whole_system(request) and not deep.switched_off(request):
        # no runbook's words fit a question about the whole system: the health sweep of
        # every part (planners/runbook/sweep.py) needs no detail
        questions = []
    if questions is None and not has_model and decision.strategy == "deep":
        # No runbook fits and no model could plan: say so rather than fail the analysis.
        return decision.model_copy(update={"strategy": "quick"})
    if questions is None:  # no runbook fits: the strategy's own questions stand
        return decision
    return _asking(decision, questions)


async def _fits_a_runbook(
    decision: StrategyDecision, request: Request, ctx: PlanningContext, deep: DeepPath | None
) -> StrategyDecision:
    """No model to answer a quick question: one a runbook's words fit is about the
    system ("место на диске закончилось?"), never "I can't answer free-form questions"."""
    if deep is None or not _may_be_about_the_system(request):
        return decision
    questions = await deep.missing_details(ctx)
    return decision if questions is None else _asking(decision, questions)


def _the_whole_system(request: Request) -> bool:
    """An incident question that names no part where the data's parts are known."""
    return request.intent == "diagnose" and request.system and bool(request.sole)


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
