"""Log checks: the lines of a component's log sources in the window, matched by a regex."""

from __future__ import annotations

import re
from datetime import datetime

from reasoning_core.runbooks.kinds.base import Bound, CheckFields, CheckKind, KindError
from reasoning_core.runbooks.templates import render_template, template_parameter_names
from reasoning_core.tools.base import ToolRequest, ToolResult


class LogsKind(CheckKind):
    name = "logs"
    #: `source`: the log sources to read, by component name, `|`-separated (the first one
    #: configured is read), with parameters: "$groupname|web", "postgres".
    fields = ("source", "query")
    own_rule = "log_lines"
    optional = True

    def validate(self, check: CheckFields) -> None:
        super().validate(check)
        if not check.source:
            raise KindError("source", "a logs check needs a source (its component's name)")
        try:
            re.compile(check.query or "")
        except re.error as e:
            raise KindError("query", f"not a regular expression: {e}") from e

    def parameter_names(self, check: CheckFields) -> list[str]:
        return template_parameter_names(check.source or "")

    def request(self, check: CheckFields, bound: Bound) -> ToolRequest:
        return ToolRequest(
            query=check.query or None,
            source=render_template(check.source or "", bound.values, kind="promql"),
            start=bound.window.baseline_start,
            end=min(bound.window.recent_end, bound.anchor),
        )

    def judge_params(self, result: ToolResult, anchor: datetime) -> dict[str, str]:
        """The source read, for a line that names it without rows, and "now" of the data
        (before the window's pad)."""
        return {"log_source": str(result.data.get("source", "")), "log_now": anchor.isoformat()}
