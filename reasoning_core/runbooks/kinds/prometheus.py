"""PromQL checks: a range query over the baseline and recent windows, or an instant one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reasoning_core.runbooks.kinds.base import (
    Bound,
    CheckFields,
    CheckKind,
    KindError,
    Probe,
    ProbeContext,
)
from reasoning_core.runbooks.rows import prometheus_rows
from reasoning_core.runbooks.templates import render_template, template_parameter_names
from reasoning_core.tools.base import Tool, ToolRequest, ToolResult


class PrometheusKind(CheckKind):
    name = "prometheus"
    lookups = True
    lookup_label = True
    part = "Prometheus (PROMETHEUS_URL)"

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

    async def probe(self, tool: Tool, context: ProbeContext) -> list[Probe]:
        result = await tool.run(ToolRequest(query="vector(1)", timeout_sec=context.limit_sec))
        if result.ok:
            return [Probe(part=self.part, state="ok", detail="answers the v1 query API")]
        fix = "PROMETHEUS_URL is the server's root (http://host:9090), not a page or another API"
        detail = f"does not answer Prometheus' HTTP API v1: {result.error}"
        return [Probe(part=self.part, state="fail", detail=detail, fix=fix)]
