"""Planning one runbook analysis: match the question, find the data's "now", run the gate.

Errors the runbook planner raises (all `UnanswerableError`s, so the explorer ends
the analysis with an answer that says why; messages are safe to show):

* `NoRunbookError` — no runbook matches the question;
* `MissingParameterError` — a required parameter (e.g. the cell) is missing;
  it carries the clarifying questions with suggested options;
* `DataSourceError` (a `ToolError`) — the data source lacks a table or column
  the runbook needs, or a tool is not configured ("data source lacks X");
* `NoDataError` — the data source has no rows for the subject.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from reasoning_core.errors import OutsideDataError, ToolError, UnanswerableError
from reasoning_core.i18n import N_, gettext
from reasoning_core.models import ClarifyingQuestion, Evidence, Language
from reasoning_core.planners.runbook.checks import (
    PlanState,
    RunbookInputError,
    bind_sql,
    build_request,
    judge,
)
from reasoning_core.runbooks import Check, Runbook, RunbookMatch, RunbookSet, SQLTemplateError
from reasoning_core.runbooks.kinds import kind_of
from reasoning_core.runbooks.loader import match_runbook
from reasoning_core.runbooks.rows import as_datetime, as_number
from reasoning_core.tools.base import Tool, ToolRequest, ToolResult
from reasoning_core.understanding.dates import DateSpan
from reasoning_core.understanding.request import Request

log = logging.getLogger(__name__)

#: The messages of the errors below, in the question's language (they reach the user).
_MESSAGES: dict[str, str] = {
    "no_runbook": N_("no runbook matches this question (runbooks: {known})"),
    "none_loaded": N_("none loaded"),
    "chosen_off": N_(
        "the runbook {runbook} this alert maps to is off: the Prometheus lacks its metrics "
        "(whytree doctor lists what is missing)"
    ),
    "no_tool": N_("the {name} tool is not configured, so this runbook cannot run"),
    "lacks": N_("data source lacks a table or column"),
    "no_anchor": N_("could not read the data's latest time: {error}"),
    "no_data": N_("the data source has no data for runbook {runbook}"),
    "no_metric": N_("no metric {metric} for {subject} in the window"),
    "no_subject_data": N_("the data source has no data for {subject} in the window"),
}


def _message(key: str, language: str, **values: object) -> str:
    return gettext(language, _MESSAGES[key]).format(**values)


class NoRunbookError(UnanswerableError):
    """No runbook matches the question."""


class MissingParameterError(UnanswerableError):
    """A required parameter is missing; `questions` ask for it (with suggested options)."""

    def __init__(
        self,
        message: str,
        *,
        runbook: str,
        missing: list[str],
        questions: list[ClarifyingQuestion],
    ) -> None:
        super().__init__(message)
        self.runbook = runbook
        self.missing = missing
        self.questions = questions


class DataSourceError(ToolError, UnanswerableError):
    """The data source cannot serve the runbook (lacks a table or column, tool missing)."""


class NoDataError(UnanswerableError):
    """The data source has no rows for what the question asks about."""


def best_match(runbooks: RunbookSet, request: Request, chosen: str | None = None) -> RunbookMatch:
    """The runbook `chosen` for this analysis (an alert's mapping names it), else the
    best-scoring one for the parsed question; NoRunbookError if none, or if the chosen one
    is not among the runbooks (discovery switched it off)."""
    if chosen:
        runbook = runbooks.get(chosen)
        if runbook is None:  # switched off by discovery: another runbook's words would guess
            raise NoRunbookError(_message("chosen_off", request.language, runbook=chosen))
        if match := match_runbook(runbook, request, chosen=True):
            return match
    matches = runbooks.match(request)
    if not matches:
        language = request.language
        known = ", ".join(sorted(runbooks.runbooks)) or _message("none_loaded", language)
        raise NoRunbookError(_message("no_runbook", language, known=known))
    return matches[0]


def parameters_of(
    match: RunbookMatch, reused: Mapping[str, Any]
) -> tuple[dict[str, str], list[str]]:
    """The question's values, gaps filled from reused parameters; and what is still missing."""
    params = dict(match.params)
    missing = []
    for name in match.missing:
        value = reused.get(name)
        if isinstance(value, str | int) and str(value).strip():
            params[name] = str(value).strip()
        else:
            missing.append(name)
    return params, missing


async def run_tool(
    tools: Mapping[str, Tool], name: str, request: ToolRequest, language: str = "en"
) -> ToolResult:
    """Run a tool the planner needs itself; DataSourceError when it is not configured."""
    tool = tools.get(name)
    if tool is None:
        raise DataSourceError(_message("no_tool", language, name=name))
    try:
        return await tool.run(request)
    except ToolError as e:
        return ToolResult.failure(name, "failed", str(e))


def raise_for_missing(result: ToolResult, language: str = "en") -> None:
    """A tool failure that means the data source lacks something the runbook needs."""
    if not result.ok and result.error_kind == "missing":
        raise DataSourceError(result.error or _message("lacks", language))


async def find_anchor(
    runbook: Runbook,
    params: Mapping[str, str],
    tools: Mapping[str, Tool],
    clock: Callable[[], datetime],
    language: str = "en",
) -> datetime:
    """The data's "now": the runbook's anchor query, else the clock."""
    last, _ = await find_data_span(runbook, params, tools, clock, language)
    return last


async def find_data_span(
    runbook: Runbook,
    params: Mapping[str, str],
    tools: Mapping[str, Tool],
    clock: Callable[[], datetime],
    language: str = "en",
) -> tuple[datetime, datetime | None]:
    """The data's "now" and, when the anchor query also returns ``first``, its first time."""
    anchor = runbook.window.anchor
    if anchor is None:
        return clock(), None
    try:
        request = kind_of(anchor.tool).lookup_request(anchor.query, params)
    except SQLTemplateError as e:
        raise RunbookInputError(str(e)) from e
    result = await run_tool(tools, anchor.tool, request, language)
    raise_for_missing(result, language)
    if not result.ok:
        raise DataSourceError(_message("no_anchor", language, error=result.error))
    value = _first_value(result)
    moment = as_datetime(value) or _unix(value)
    if moment is None:
        raise NoDataError(_message("no_data", language, runbook=runbook.id))
    first = result.rows[0].get("first") if result.rows else None
    return moment, as_datetime(first) if first is not None else None


#: The least history a period needs before it to be compared with (the baselines line
#: hours up by hour of the week).
MIN_HISTORY = timedelta(days=7)


def check_period(
    dates: DateSpan, *, first: datetime | None, last: datetime, language: Language
) -> None:
    """`OutsideDataError` when the period the question asks about starts outside
    [first, last] (before the data, or after its latest time), or so near the data's
    first day that there is no week before it to compare it with."""
    if dates.start is None:
        return
    start = dates.start.resolve(last)
    ends = dates.start.last_day(last)  # a year asked about may start before the data
    first_day = first.replace(hour=0, minute=0, second=0) if first is not None else None
    before = first_day is not None and ends < first_day
    asked = dates.start.text
    # (a year or month asked about as a whole means its latest days: `resolve_window`)
    whole = dates.start.kind == "year" or dates.start.whole_month
    if first_day is not None and not (before or whole) and start < first_day + MIN_HISTORY:
        _no_history(asked, first_day, language)
    if not (before or start > last):
        return
    covered = f"{first:%d.%m.%Y} – {last:%d.%m.%Y}" if first else f"… – {last:%d.%m.%Y}"
    text = gettext(
        language,
        "There is no data for “{asked}”: the data covers {covered}. "
        "Ask about a day in that range, or without a date for the latest days.",
    )
    raise OutsideDataError(text.format(asked=asked, covered=covered))


def _no_history(asked: str, first_day: datetime, language: Language) -> None:
    """The period starts in the data's first week: nothing before it to compare with."""
    earliest = first_day + MIN_HISTORY
    text = gettext(
        language,
        "There is nothing to compare “{asked}” with: the data starts on {first}, and a "
        "comparison needs at least a week before the period. Ask about a day from {earliest} "
        "on, or without a date for the latest days.",
    )
    raise OutsideDataError(
        text.format(asked=asked, first=f"{first_day:%d.%m.%Y}", earliest=f"{earliest:%d.%m.%Y}")
    )


def _first_value(result: ToolResult) -> Any:
    if not result.rows:
        return None
    row = result.rows[0]
    if "value" in row and ("ts" in row or "metric" in row):  # a Prometheus sample
        return row["value"]
    if "anchor" in row:
        return row["anchor"]
    return next(iter(row.values()), None)


def _unix(value: Any) -> datetime | None:
    number = as_number(value)
    return as_datetime(number) if number is not None else None


async def options_for(
    runbook: Runbook, missing: Sequence[str], tools: Mapping[str, Tool], state: PlanState | None
) -> dict[str, list[str]]:
    """Suggested answers per missing parameter: declared options, else its options_query."""
    found: dict[str, list[str]] = {}
    for parameter in runbook.parameters:
        if parameter.name not in missing:
            continue
        options = list(parameter.options)
        if not options and parameter.options_query and "sql" in tools:
            values = state.window.params() | {"anchor": state.anchor} if state else {}
            try:
                sql, args = bind_sql(parameter.options_query, values)
            except RunbookInputError:
                sql, args = "", []
            result = await tools["sql"].run(ToolRequest(query=sql, params=args, max_rows=4))
            if sql and result.ok:
                options = [str(next(iter(r.values()))) for r in result.rows if r]
        found[parameter.name] = [o for o in options if o][:4]
    return found


async def run_gate(
    runbook: Runbook, state: PlanState, tools: Mapping[str, Tool]
) -> list[tuple[Check, Evidence]]:
    """Run the gate checks concurrently; each with its own evidence (inconclusive on failure)."""
    if runbook.gate is None:
        return []
    checks = [runbook.check(ref) for ref in runbook.gate.checks]
    language = state.language
    results = await asyncio.gather(
        *(run_tool(tools, c.tool, build_request(c, runbook, state), language) for c in checks)
    )
    found = []
    for check, result in zip(checks, results, strict=True):
        raise_for_missing(result, language)
        if not result.ok:
            text = f"{check.id}: {result.error}"
            found.append((check, Evidence(confirmed=None, confidence=0.0, text=text)))
            continue
        if result.row_count == 0:
            subject = ", ".join(f"{k} {v}" for k, v in state.params.items()) or runbook.id
            metrics = _metrics_of(runbook, check)
            if metrics:
                raise NoDataError(
                    _message("no_metric", language, metric=", ".join(metrics), subject=subject)
                )
            raise NoDataError(_message("no_subject_data", language, subject=subject))
        found.append((check, judge(check, state, result)))
    return found


def _metrics_of(runbook: Runbook, check: Check) -> list[str]:
    """The metric names a check's query uses (from the runbook's `metrics`)."""
    return check.kind.metric_names(check, runbook.metrics)


def gate_refuted(found: Sequence[tuple[Check, Evidence]]) -> bool:
    """Every gate check refuted: there is nothing to explain."""
    return bool(found) and all(evidence.confirmed is False for _, evidence in found)
