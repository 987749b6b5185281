"""Scrape-target checks: why Prometheus could not scrape a job's targets (the error of
their last scrape, reasoning_core/tools/scrape_targets.py), read by the `scrape_error` rule."""

from __future__ import annotations

from reasoning_core.runbooks.kinds.base import Bound, CheckFields, CheckKind, KindError
from reasoning_core.runbooks.templates import render_template, template_parameter_names
from reasoning_core.tools.base import ToolRequest


class ScrapeTargetsKind(CheckKind):
    name = "scrape_targets"
    own_rules = ("scrape_error",)
    # Wired with PROMETHEUS_URL; absent beside a Prometheus-less deployment, as logs are.
    optional = True

    def validate(self, check: CheckFields) -> None:
        super().validate(check)
        if not check.query:
            raise KindError("query", "a scrape_targets check names its job, e.g. $job")

    def parameter_names(self, check: CheckFields) -> list[str]:
        return template_parameter_names(check.query or "")

    def request(self, check: CheckFields, bound: Bound) -> ToolRequest:
        return ToolRequest(query=render_template(check.query or "", bound.values, kind="promql"))
