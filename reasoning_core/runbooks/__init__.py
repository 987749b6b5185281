"""Runbooks: known incident types as YAML, checked with tools, judged by verdict rules.

The public surface, used by the runbook planner and the LLM planner's guidance:

* `load_runbooks(dirs) -> RunbookSet`; `RunbookSet.match(question) -> [RunbookMatch]`;
* `RunbookMatch.window(now)` / `.values(window)` / `.clarifying_questions()`;
* `compile_sql(template)` -> `CompiledSQL(sql, names)` for asyncpg, and
  `render_template` for PromQL and URLs;
* `evaluate(rule, rows, window, tags=...) -> Evidence`, and `prometheus_rows`.

See docs/runbooks.md for the format.
"""

from reasoning_core.runbooks.loader import (
    LoadError,
    RunbookMatch,
    RunbookSet,
    load_runbooks,
    match_runbook,
    parse_runbook,
)
from reasoning_core.runbooks.model import (
    NONE_ID,
    Check,
    Gate,
    Hypothesis,
    Localized,
    Parameter,
    Runbook,
)
from reasoning_core.runbooks.rows import prometheus_rows
from reasoning_core.runbooks.sqltext import (
    CompiledSQL,
    SQLTemplateError,
    compile_sql,
    ensure_read_only,
)
from reasoning_core.runbooks.templates import TemplateError, render_template
from reasoning_core.runbooks.timewindow import TimeWindow, resolve_window
from reasoning_core.runbooks.verdicts import evaluate

__all__ = [
    "NONE_ID",
    "Check",
    "CompiledSQL",
    "Gate",
    "Hypothesis",
    "LoadError",
    "Localized",
    "Parameter",
    "Runbook",
    "RunbookMatch",
    "RunbookSet",
    "SQLTemplateError",
    "TemplateError",
    "TimeWindow",
    "compile_sql",
    "ensure_read_only",
    "evaluate",
    "load_runbooks",
    "match_runbook",
    "parse_runbook",
    "prometheus_rows",
    "render_template",
    "resolve_window",
]
