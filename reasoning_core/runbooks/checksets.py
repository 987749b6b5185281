"""Check sets: checks written once and included by several runbooks (docs/runbooks.md).

A check set is a YAML file with an `id`, its `checks` (the runbook check format), the
`links` that follow their findings and the `metrics` keys they use. A runbook's
`include: [id, ...]` adds the set's checks and links to its own and fills the metric keys
it does not map itself; a check id both define is an error (the runbook's validation
names it), so a shared check is never silently replaced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reasoning_core.runbooks.model import Check, FieldError, Identifier, Link, MetricName

#: A check set's raw data by id: {"checks": [...], "metrics": {...}}.
CheckSets = Mapping[str, dict[str, Any]]


class CheckSet(BaseModel):
    """One check-set file, validated: checks in the runbook format, metric keys."""

    model_config = ConfigDict(extra="forbid")

    id: Identifier
    description: str | None = None
    checks: list[Check]
    #: "Because" steps after its checks (their `after` and `checks` name the set's checks).
    links: list[Link] = Field(default_factory=list)
    metrics: dict[Identifier, MetricName] = Field(default_factory=dict)


def read_check_sets(
    sources: Iterable[tuple[str, str]],
) -> tuple[dict[str, dict[str, Any]], list[tuple[str, str, str]]]:
    """The check sets of (file, text) pairs by id (a later file overrides an earlier one),
    and (file, field, message) for each file that is not one."""
    sets: dict[str, dict[str, Any]] = {}
    errors: list[tuple[str, str, str]] = []
    for file, text in sources:
        try:
            raw = yaml.safe_load(text)
            parsed = CheckSet.model_validate(raw)
        except yaml.YAMLError as e:
            errors.append((file, "(yaml)", f"not valid YAML: {e}"))
            continue
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            errors.append((file, where, str(first["msg"]).removeprefix("Value error, ")))
            continue
        sets[parsed.id] = {
            "checks": raw["checks"],
            "links": list(raw.get("links") or []),
            "metrics": dict(raw.get("metrics") or {}),
        }
    return sets, errors


def include(data: dict[str, Any], sets: CheckSets) -> dict[str, Any]:
    """The runbook's data with the checks, links and metric keys of the sets it includes."""
    names = data.get("include")
    if names is None:
        return data
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise FieldError("include", "a list of check-set ids")
    merged = {k: v for k, v in data.items() if k != "include"}
    checks = list(merged.get("checks") or [])
    links = list(merged.get("links") or [])
    metrics: dict[str, Any] = {}
    for name in names:
        if name not in sets:
            raise FieldError("include", f"unknown check set {name!r}")
        checks.extend(sets[name]["checks"])
        links.extend(sets[name].get("links", []))
        metrics.update(sets[name]["metrics"])
    merged["checks"] = checks
    if links:
        merged["links"] = links
    if metrics:
        own = merged.get("metrics") or {}
        merged["metrics"] = {**metrics, **own}
        merged["included_metrics"] = sorted(set(metrics) - set(own))
    return merged
