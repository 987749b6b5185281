"""PromQL checks: a range query over the baseline and recent windows, or an instant one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reasoning_core.runbooks.kinds.base import Bound, CheckFields, CheckKind, KindError
from reasoning_core.runbooks.rows import prometheus_rows
from reasoning_core.runbooks.templates import render_template, template_parameter_names
from reasoning_core.tools.base import ToolRequest, ToolResult


class PrometheusKind(CheckKind):
    name = "prometheus"
    lookups = True
    lookup_label = True

    def validate(self, check: CheckFields) -> None:
        super().validate(check)
        if not check.query:
            raise KindError("query", "a prometheus check needs a query")

    def parameter_names(self, check: CheckFields) -> list[str]:
        return template_parameter_names(check.query or "")

    def request(self, check: CheckFields, bound: Bound) -> ToolRequest:
        query = render_template(check.query or "", bound.values, kind="promql")
        if not check.range:
            return ToolRequest(query=query, time=bound.anchor)
        window = bound.window
        start = window.recent_start if check.span == "recent" else window.baseline_start
        return ToolRequest(
            query=query,
            start=start,
            end=min(window.recent_end, bound.anchor),
            step_sec=float(check.step_seconds),
        )

    def rows(self, result: ToolResult) -> list[dict[str, Any]]:
        """Series flattened into samples."""
        return prometheus_rows(result.rows)

    def metric_names(self, check: CheckFields, metrics: Mapping[str, str]) -> list[str]:
        names = [metrics[n] for n in self.parameter_names(check) if n in metrics]
        return list(dict.fromkeys(names))  # the runbook model validated them as names

    def lookup_request(self, query: str, params: Mapping[str, Any]) -> ToolRequest:
        return ToolRequest(query=query)

    def lookup_parameter_names(self, query: str) -> list[str]:
        return template_parameter_names(query)
