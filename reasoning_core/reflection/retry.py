"""A `RetryPlan` made concrete: the new check to run, and the context to plan it in.

- **again**: the same request with more time: its timeout multiplied, or
  `RETRY_TIMEOUT_SEC` when it ran under the tool's default;
- **resume**: the same request, unchanged (the early stop cut it before it ran);
- **alternative_query**: the same tool with the critique's query (no bound values);
- **wider_window**: the recent window starts `window_factor` window lengths
  earlier (the baseline keeps its length and moves along). A request with
  `start`/`end` (Prometheus) is widened directly; a planner that keeps its window
  in the planning parameters (the runbook planner's ``recent_start`` ...
  ``baseline_end``) is asked for the check again with widened parameters; any
  other planner (the LLM) is asked again, told why and how to widen.

The retry gets the key ``<key>.retry`` and a description saying how it differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from reasoning_core.i18n import N_, gettext, pgettext
from reasoning_core.ports.planning import CheckProposal, PlanningContext
from reasoning_core.reflection.decision import RetryPlan

#: A check that timed out under the tool's own default gets this long on its retry.
RETRY_TIMEOUT_SEC = 30.0
WINDOW_KEYS = ("recent_start", "recent_end", "baseline_start", "baseline_end")
#: How a retry differs from its check (the planner's hint is worded with these too).
_HOW_TEXT = {
    "again": N_("run again with more time"),
    "wider_window": N_("over a wider time window"),
    "alternative_query": N_("with another query"),
    "resume": N_("run after the early stop"),
}


def retry_key(check: CheckProposal) -> str:
    """The key of a check's retry."""
    return f"{check.key[:57]}.retry"


def how_text(how: str, language: str) -> str:
    """How a retry differs from its check ("over a wider time window"), in `language`."""
    return gettext(language, _HOW_TEXT[how]) if how in _HOW_TEXT else how


def retry_description(check: CheckProposal, plan: RetryPlan, language: str = "en") -> str:
    """The retry's description: the check's, and how this run differs (in `language`)."""
    word = pgettext(language, "a retry of a check", "retry")
    return f"{check.description[:440]} ({word}: {how_text(plan.how, language)})"


def retry_hint(check: CheckProposal, plan: RetryPlan) -> str:
    """What the planner hears when asked for the check again."""
    return (
        f"the check {check.key!r} ({check.description[:200]}) did not give an answer "
        f"({plan.reason[:300]}). Propose it again {_HOW_TEXT[plan.how]}"
        + (
            f": a time window {plan.window_factor:g} times longer."
            if plan.how == "wider_window"
            else "."
        )
    )


def _as_time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def widen_window(window: Mapping[str, Any], factor: float) -> dict[str, Any] | None:
    """The window with its recent part `factor` times longer; None if it is no window."""
    times = {key: _as_time(window.get(key)) for key in WINDOW_KEYS}
    if any(t is None for t in times.values()):
        return None
    start, end = times["recent_start"], times["recent_end"]
    base_start, base_end = times["baseline_start"], times["baseline_end"]
    assert start and end and base_start and base_end
    new_start = end - (end - start) * factor
    shift = base_end - new_start
    widened = {
        "recent_start": new_start,
        "baseline_end": base_end - shift,
        "baseline_start": base_start - shift,
    }
    as_text = isinstance(window.get("recent_start"), str)
    return {
        **window,
        **{k: v.isoformat() if as_text else v for k, v in widened.items()},
    }


def widen_parameters(parameters: Mapping[str, Any], factor: float) -> dict[str, Any] | None:
    """Planning parameters with every time window in them widened; None when there is none."""
    found = False

    def walk(value: Any, depth: int) -> Any:
        nonlocal found
        if not isinstance(value, Mapping) or depth > 3:  # noqa: PLR2004 - nesting of plan state
            return value
        widened = widen_window(value, factor)
        if widened is not None:
            found = True
            return widened
        return {k: walk(v, depth + 1) for k, v in value.items()}

    result = walk(parameters, 0)
    return dict(result) if found else None


def widened_request(check: CheckProposal, factor: float) -> CheckProposal | None:
    """A check whose request has start/end, widened; None for other requests."""
    request = check.request
    if request.start is None or request.end is None:
        return None
    start = request.end - (request.end - request.start) * factor
    return check.model_copy(update={"request": request.model_copy(update={"start": start})})


def direct_retry(check: CheckProposal, plan: RetryPlan) -> CheckProposal | None:
    """The retry when no planner is needed; None when the planner must be asked."""
    request = check.request
    if plan.how == "again":
        base = request.timeout_sec or RETRY_TIMEOUT_SEC / plan.timeout_factor
        timeout = base * plan.timeout_factor
        return check.model_copy(
            update={"request": request.model_copy(update={"timeout_sec": timeout})}
        )
    if plan.how == "alternative_query" and plan.query:
        return check.model_copy(
            update={"request": request.model_copy(update={"query": plan.query, "params": []})}
        )
    if plan.how == "wider_window":
        return widened_request(check, plan.window_factor)
    if plan.how == "resume":
        return check
    return None


def retry_context(ctx: PlanningContext, check: CheckProposal, plan: RetryPlan) -> PlanningContext:
    """The context in which to ask the planner for the check again."""
    parameters = dict(ctx.parameters)
    if plan.how == "wider_window":
        parameters = widen_parameters(parameters, plan.window_factor) or parameters
    return ctx.model_copy(
        update={"parameters": parameters, "previous_failure": retry_hint(check, plan)}
    )


def pick(checks: list[CheckProposal], original: CheckProposal) -> CheckProposal | None:
    """The planner's new version of the original check (same key), else its first check."""
    for check in checks:
        if check.key == original.key:
            return check
    return checks[0] if checks else None


def finish(
    check: CheckProposal, original: CheckProposal, plan: RetryPlan, language: str = "en"
) -> CheckProposal:
    """The retry as it goes into the tree: its own key and a description saying how."""
    description = retry_description(original, plan, language)
    return check.model_copy(update={"key": retry_key(original), "description": description})
