"""Log checks: the lines of a component's log sources in the window, matched by a regex."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from reasoning_core.runbooks.kinds.base import (
    Bound,
    CheckFields,
    CheckKind,
    KindError,
    Probe,
    ProbeContext,
)
from reasoning_core.runbooks.templates import render_template, template_parameter_names
from reasoning_core.tools.base import Tool, ToolRequest, ToolResult


@runtime_checkable
class SourceLister(Protocol):
    """A log tool that names its sources (reasoning_core/logs/tool.py: `LogTool`)."""

    @property
    def sources(self) -> Sequence[str]: ...


class LogsKind(CheckKind):
    name = "logs"
    #: `source`: the log sources to read, by component name, `|`-separated (the first one
    #: configured is read), with parameters: "$groupname|web", "postgres".
    fields = ("source", "query")
    own_rules = ("log_lines",)
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

    def absent(self, context: ProbeContext) -> None:
        return None  # no LOG_SOURCES: nothing to say

    async def probe(self, tool: Tool, context: ProbeContext) -> list[Probe]:
        """One line per log source: readable, with its lines of the last hour, or why not."""
        if not isinstance(tool, SourceLister):
            return []
        now = datetime.now(UTC)
        probes = []
        for name in tool.sources:
            request = ToolRequest(
                source=name, start=now - timedelta(hours=1), end=now, timeout_sec=context.limit_sec
            )
            result = await tool.run(request)
            part = f"log source {name}"
            if not result.ok:
                fix = "check its paths, permissions, unit or URL in LOG_SOURCES (docs/logs.md)"
                detail = result.error or "unreadable"
                probes.append(
                    Probe(part=part, state="fail", detail=detail, fix=fix, required=False)
                )
                continue
            more = " or more" if result.truncated else ""
            detail = f"readable, {result.row_count}{more} lines in the last hour"
            probes.append(Probe(part=part, state="ok", detail=detail))
        return probes
