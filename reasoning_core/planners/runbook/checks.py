"""Runbook checks as tool requests, and tool results as evidence (the runbook planner's I/O).

A check's template becomes a `ToolRequest` as its kind builds it
(reasoning_core/runbooks/kinds/): values travel apart from the text — SQL gets
`$n` placeholders and a list of arguments (never a formatted value), PromQL and
URLs get validated template values.

Interpretation applies the check's verdict rule (`evaluate`) to the rows its
kind reads. For
an ``against`` check the evidence is turned around: a confirmed finding
("availability fell") refutes the hypothesis with its strength, anything else
adds nothing (docs/runbooks.md, "against is a veto").
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict

from reasoning_core.errors import UnanswerableError
from reasoning_core.models import Evidence, Language
from reasoning_core.runbooks import (
    Check,
    Runbook,
    SQLTemplateError,
    TemplateError,
    TimeWindow,
    evaluate,
)
from reasoning_core.runbooks.kinds import Bound
from reasoning_core.runbooks.kinds import bind_sql as bind_sql_args
from reasoning_core.tools.base import ToolRequest, ToolResult
from reasoning_core.tree.wording import phrase

Role = Literal["for", "against", "gate"]

#: Where the planner keeps its `PlanState` in `Plan.parameters` / `PlanningContext.parameters`.
STATE_KEY = "runbook_plan"
#: Rows a runbook check may read: hourly series of a cell and its peers over 4 weeks.
DEFAULT_MAX_ROWS = 50_000


class RunbookInputError(UnanswerableError):
    """A value from the question cannot be used in a check (unsafe or missing)."""


class PlanState(BaseModel):
    """What the runbook planner resolved for one analysis; kept in the plan's parameters."""

    model_config = ConfigDict(frozen=True)

    runbook: str
    language: Language
    params: dict[str, str]
    anchor: AwareDatetime
    window: TimeWindow


def template_values(runbook: Runbook, state: PlanState, *, step: timedelta) -> dict[str, Any]:
    """Every value a template may name: parameters, date parameters, the window, the step."""
    values: dict[str, Any] = {**runbook.metrics, **state.params}
    for parameter in runbook.parameters:
        if parameter.source == "date":
            values[parameter.name] = state.window.recent_start
    values.update(state.window.params())
    values["anchor"] = state.anchor
    values["step"] = step
    return values


def bind_sql(template: str, values: dict[str, Any]) -> tuple[str, list[Any]]:
    """asyncpg-ready SQL and its arguments (the sql kind's binding); RunbookInputError
    when a value cannot be used."""
    try:
        return bind_sql_args(template, values)
    except SQLTemplateError as e:
        raise RunbookInputError(str(e)) from e


def build_request(
    check: Check, runbook: Runbook, state: PlanState, *, max_rows: int = DEFAULT_MAX_ROWS
) -> ToolRequest:
    """The tool request of one check, as its kind builds it; RunbookInputError when a
    value cannot be used."""
    bound = Bound(
        values=template_values(runbook, state, step=timedelta(seconds=check.step_seconds)),
        window=state.window,
        anchor=state.anchor,
        max_rows=max_rows,
    )
    try:
        return check.kind.request(check, bound)
    except SQLTemplateError as e:
        raise RunbookInputError(str(e)) from e
    except TemplateError as e:
        raise RunbookInputError(f"check {check.id}: {e}") from e


def judge(check: Check, state: PlanState, result: ToolResult) -> Evidence:
    """The check's own finding (before `against` turns it around)."""
    kind = check.kind
    params = {**state.params, **kind.judge_params(result, state.anchor)}
    evidence = evaluate(
        check.verdict,
        kind.rows(result),
        state.window,
        tags=check.tags,
        language=state.language,
        params=params,
    )
    evidence.data = {**evidence.data, "check": check.id, "rows": result.row_count}
    return evidence


def as_role(evidence: Evidence, role: Role, language: str) -> Evidence:
    """Evidence for the hypothesis the check serves: as found, or as a veto (`against`)."""
    if role != "against":
        return evidence
    data = {**evidence.data, "role": "against"}
    if evidence.confirmed:
        text = phrase("against", language, text=evidence.text)
        return evidence.model_copy(update={"confirmed": False, "text": text, "data": data})
    text = phrase("not_against", language, text=evidence.text)
    return Evidence(confirmed=None, confidence=0.0, text=text, data=data, has_data=True)
