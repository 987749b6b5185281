"""Runbook checks as tool requests, and tool results as evidence (the runbook planner's I/O).

A check's template becomes a `ToolRequest` whose values travel apart from the
text: SQL gets `$n` placeholders and a list of arguments (never a formatted
value), PromQL and URLs get validated template values. Times are sent as ISO
text cast in SQL (``$n::text::timestamptz``) because the explorer stores each
request as JSON and runs it from there, also after a restart.

Interpretation applies the check's verdict rule (`evaluate`) to its rows. For
an ``against`` check the evidence is turned around: a confirmed finding
("availability fell") refutes the hypothesis with its strength, anything else
adds nothing (docs/runbooks.md, "against is a veto").
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
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
    compile_sql,
    evaluate,
    prometheus_rows,
    render_template,
)
from reasoning_core.runbooks.sqltext import mask_sql
from reasoning_core.tools.base import ToolRequest, ToolResult
from reasoning_core.tree.wording import phrase

Role = Literal["for", "against", "gate"]

#: Where the planner keeps its `PlanState` in `Plan.parameters` / `PlanningContext.parameters`.
STATE_KEY = "runbook_plan"
#: Rows a runbook check may read: hourly series of a cell and its peers over 4 weeks.
DEFAULT_MAX_ROWS = 50_000
_POSITIONAL = re.compile(r"\$(\d+)(?!\d)")


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
    """asyncpg-ready SQL and its arguments; times and intervals travel as cast text."""
    compiled = compile_sql(template)
    try:
        args = compiled.args(values)
    except SQLTemplateError as e:
        raise RunbookInputError(str(e)) from e
    casts: dict[int, str] = {}
    sent: list[Any] = []
    for i, value in enumerate(args, start=1):
        if isinstance(value, datetime):
            casts[i] = "::text::timestamptz"
            sent.append(value.isoformat())
        elif isinstance(value, timedelta):
            casts[i] = "::text::interval"
            sent.append(f"{value.total_seconds():g} seconds")
        else:
            sent.append(value)
    masked = mask_sql(compiled.sql)  # literals blanked: only real placeholders match
    out, last = [], 0
    for m in _POSITIONAL.finditer(masked):
        out += [compiled.sql[last : m.end()], casts.get(int(m.group(1)), "")]
        last = m.end()
    out.append(compiled.sql[last:])
    return "".join(out), sent


def build_request(
    check: Check, runbook: Runbook, state: PlanState, *, max_rows: int = DEFAULT_MAX_ROWS
) -> ToolRequest:
    """The tool request of one check; RunbookInputError when a value cannot be used."""
    values = template_values(runbook, state, step=timedelta(seconds=check.step_seconds))
    try:
        if check.tool == "sql":
            sql, args = bind_sql(check.query or "", values)
            return ToolRequest(query=sql, params=args, max_rows=max_rows)
        if check.tool == "prometheus":
            query = render_template(check.query or "", values, kind="promql")
            if not check.range:
                return ToolRequest(query=query, time=state.anchor)
            end = min(state.window.recent_end, state.anchor)
            start = state.window.recent_start if check.span == "recent" else None
            return ToolRequest(
                query=query,
                start=start or state.window.baseline_start,
                end=end,
                step_sec=float(check.step_seconds),
            )
        if check.tool == "logs":
            return ToolRequest(
                query=check.query or None,
                source=render_template(check.source or "", values, kind="promql"),
                start=state.window.baseline_start,
                end=min(state.window.recent_end, state.anchor),
            )
        if check.tool == "pg_sessions":
            return ToolRequest(query=check.query)
        assert check.request is not None  # validated at load
        url = render_template(check.request.url, values, kind="url")
        return ToolRequest(url=url, method=check.request.method)
    except TemplateError as e:
        raise RunbookInputError(f"check {check.id}: {e}") from e


def result_rows(check: Check, result: ToolResult) -> list[dict[str, Any]]:
    """The rows a verdict rule reads (Prometheus series flattened into samples)."""
    if check.tool == "prometheus":
        return prometheus_rows(result.rows)
    return list(result.rows)


def judge(check: Check, state: PlanState, result: ToolResult) -> Evidence:
    """The check's own finding (before `against` turns it around)."""
    params = state.params
    if check.tool == "logs":  # the source read, for a line that names it without rows
        params = {
            **params,
            "log_source": str(result.data.get("source", "")),
            "log_now": state.anchor.isoformat(),  # "now" of the data, before the window's pad
        }
    evidence = evaluate(
        check.verdict, result_rows(check, result), state.window, tags=check.tags,
        language=state.language, params=params,
    )  # fmt: skip
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
