"""Text templates of Prometheus and HTTP checks (``$name`` / ``${name}`` placeholders).

PromQL and URLs cannot bind parameters, so values are substituted into text.
To keep a question from smuggling PromQL or a different host in, string values
must be plain identifiers (letters, digits, ``_ . : - /``); datetimes become Unix
seconds and timedeltas PromQL durations. URL values are percent-encoded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Literal
from urllib.parse import quote

_PLACEHOLDER = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
#: Letters, digits and ``_ . : - /`` (a host:port, a route "/checkout", a probe target URL
#: "http://host:port/path"): nothing that can close a quoted label matcher or add syntax.
_SAFE_VALUE = re.compile(r"^[A-Za-z0-9_.:/-]{1,128}$")


class TemplateError(ValueError):
    """A placeholder has no value, or the value is unsafe to put into the text."""


def template_parameter_names(template: str) -> list[str]:
    """Placeholders used in the template, in order of first use."""
    names: list[str] = []
    for m in _PLACEHOLDER.finditer(template):
        name = m.group(1) or m.group(2)
        if name not in names:
            names.append(name)
    return names


def _format(value: Any, *, kind: Literal["promql", "url"]) -> str:
    if isinstance(value, bool):
        raise TemplateError("boolean values are not allowed in templates")
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise TemplateError("datetimes must be timezone-aware")
        return f"{value.timestamp():.0f}"
    if isinstance(value, timedelta):
        return f"{int(value.total_seconds())}s"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if kind == "url":
        return quote(text, safe="")
    if not _SAFE_VALUE.match(text):
        raise TemplateError(f"value {text[:40]!r} is not a plain identifier")
    return text


def render_template(
    template: str, values: Mapping[str, Any], *, kind: Literal["promql", "url"]
) -> str:
    """Substitute every placeholder; raise TemplateError on a missing or unsafe value."""

    def substitute(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name not in values or values[name] is None:
            raise TemplateError(f"no value for parameter {name}")
        return _format(values[name], kind=kind)

    return _PLACEHOLDER.sub(substitute, template)
