"""HTTP checks: a GET or HEAD to an allow-listed URL, its status and latency."""

from __future__ import annotations

from reasoning_core.runbooks.kinds.base import Bound, CheckFields, CheckKind, KindError
from reasoning_core.runbooks.templates import render_template, template_parameter_names
from reasoning_core.tools.base import ToolRequest


class HttpKind(CheckKind):
    name = "http_check"
    fields = ("request",)

    @property
    def template_field(self) -> str:
        return "request.url"

    def validate(self, check: CheckFields) -> None:
        super().validate(check)
        if check.request is None:
            raise KindError("request", "an http_check needs a request")

    def parameter_names(self, check: CheckFields) -> list[str]:
        return template_parameter_names(check.request.url if check.request else "")

    def request(self, check: CheckFields, bound: Bound) -> ToolRequest:
        assert check.request is not None  # validated at load
        url = render_template(check.request.url, bound.values, kind="url")
        return ToolRequest(url=url, method=check.request.method)
