"""Discovery: which runbooks the configured Prometheus can serve (docs/runbooks.md, "Discovery").

`read_catalogue` reads what Prometheus has — metric names
(``/api/v1/label/__name__/values``), their types (``/api/v1/metadata``) and the
label names of the metrics that name a subject — through a `CatalogueReader`
(the prometheus tool). `judge` then decides per runbook, after the runbook's own
`metrics:` mapping:

* **live** when every gate check can run (without a gate: every metric of its checks
  exists): a gate check whose query offers alternatives at its top level (`A or B`:
  prometheus_client's metrics or OpenTelemetry's) runs when one alternative has all
  its metrics (a part that only supplies a default, `or on () vector(0)`, is none);
  metrics of other checks that are missing are listed (their checks come back
  inconclusive), and a hypothesis none of whose checks can run — every one a check over
  metrics missing one in each alternative (endpoint_probe's mesh walk without a
  mesh) — is left out of the runbook: not measurable here, it is no candidate;
* **off** when a gate metric is missing, when a metric's type (from the metadata)
  differs from the runbook's `metric_types` (a gauge where a counter is expected
  is refused, not queried wrongly), or when none of a subject label's candidates
  is on its metric;
* a `source: label` parameter keeps the candidate labels present: one left is the
  label; several left are for the question to name, else the clarifying question.

A runbook that names no metrics (SQL runbooks such as `cell_traffic_drop`) is not
affected. A metric without metadata (never scraped: TSDB blocks) has no known type
and is taken as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from reasoning_core.runbooks.kinds import kind_of
from reasoning_core.runbooks.loader import RunbookSet
from reasoning_core.runbooks.model import Parameter, Runbook
from reasoning_core.runbooks.templates import template_parameter_names

#: A part of a query that only supplies a default (`or on () vector(0)`, `or on () (0 *
#: max(kube_pod_info))`): it begins with `vector(` or `0 *` (after `on (…)` and parentheses)
#: or ends with `* 0`. Not an alternative source of the data.
_DEFAULT_HEAD = re.compile(r"^\s*(?:on\s*\([^)]*\)\s*)?[\s(]*(?:vector\(|0\s*\*)")
_DEFAULT_TAIL = re.compile(r"\*\s*0[\s)]*$")

#: Suffixes a sample name adds to its metric family's name (metadata is per family).
_FAMILY_SUFFIXES = ("_total", "_bucket", "_count", "_sum", "_created", "_info")


@runtime_checkable
class CatalogueReader(Protocol):
    """What Prometheus has (implemented by `reasoning_core.tools.prometheus.PrometheusTool`);
    each method raises `CatalogueError` when Prometheus cannot say."""

    async def metric_names(self) -> list[str]: ...

    async def metric_types(self) -> dict[str, str]: ...

    async def label_names(self, metric: str) -> list[str]: ...


@dataclass(frozen=True)
class MetricCatalogue:
    """Metric names, their types by family, and the label names of the metrics asked about."""

    names: frozenset[str]
    types: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def type_of(self, metric: str) -> str | None:
        """The metric's type from the metadata (its own name, else its family's); None when
        unknown (no metadata, or ``unknown``)."""
        candidates = [metric] + [
            metric.removesuffix(suffix) for suffix in _FAMILY_SUFFIXES if metric.endswith(suffix)
        ]
        for name in candidates:
            kind = self.types.get(name)
            if kind and kind != "unknown":
                return kind
        return None


async def read_catalogue(reader: CatalogueReader, runbooks: Iterable[Runbook]) -> MetricCatalogue:
    """Read names and types, and the label names of every metric a subject label is read from."""
    names = frozenset(await reader.metric_names())
    types = await reader.metric_types()
    wanted = {
        runbook.metrics[p.of]
        for runbook in runbooks
        for p in runbook.parameters
        if p.source == "label" and p.of is not None and p.of in runbook.metrics
    }
    labels = {m: frozenset(await reader.label_names(m)) for m in sorted(wanted & names)}
    return MetricCatalogue(names=names, types=types, labels=labels)


@dataclass(frozen=True)
class RunbookStatus:
    """What discovery found for one runbook."""

    runbook: str
    live: bool
    #: Metric names the runbook maps that Prometheus does not have.
    missing: tuple[str, ...] = ()
    #: Why the runbook is off (empty when live).
    reasons: tuple[str, ...] = ()
    #: `source: label` parameter -> the candidate labels present on its metric.
    labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: False for a runbook that names no metrics (not affected by discovery).
    uses_metrics: bool = True
    #: Hypotheses none of whose checks can run here: left out of the live runbook.
    unservable: tuple[str, ...] = ()

    def line(self) -> str:
        """One readable line: live (with what is missing) or off and why."""
        if not self.uses_metrics:
            return "live (no Prometheus metrics to discover)"
        if not self.live:
            return "off: " + "; ".join(self.reasons)
        found = ", ".join(f"{name} by {'/'.join(ls)}" for name, ls in self.labels.items())
        text = "live" + (f" ({found})" if found else "")
        if self.missing:
            text += f"; missing {', '.join(self.missing)} (their checks stay inconclusive)"
        if self.unservable:
            text += f"; not considered: {', '.join(self.unservable)}"
        return text


def judge(runbook: Runbook, catalogue: MetricCatalogue) -> RunbookStatus:
    """Is the runbook live against this catalogue, and with which subject labels?"""
    if not runbook.metrics:
        return RunbookStatus(runbook=runbook.id, live=True, uses_metrics=False)
    used = _used_keys(runbook)
    absent = [runbook.metrics[k] for k in used if runbook.metrics[k] not in catalogue.names]
    missing = tuple(dict.fromkeys(absent))
    if runbook.gate is None:
        reasons = [f"no metric {metric}" for metric in missing]
    else:
        reasons = _gate_reasons(runbook, catalogue)
    for key, expected in runbook.metric_types.items():
        metric = runbook.metrics[key]
        found = catalogue.type_of(metric)
        if key in used and metric in catalogue.names and found and found != expected:
            reasons.append(f"{metric} is a {found}, the runbook expects a {expected}")
    labels: dict[str, tuple[str, ...]] = {}
    for parameter in runbook.parameters:
        if parameter.source != "label" or parameter.of is None:
            continue
        metric = runbook.metrics[parameter.of]
        carried = catalogue.labels.get(metric)
        if carried is None:
            continue  # the metric is missing (said above) or its labels were not read
        present = tuple(label for label in parameter.labels if label in carried)
        if not present:
            reasons.append(f"no label {' or '.join(parameter.labels)} on {metric}")
        labels[parameter.name] = present
    return RunbookStatus(
        runbook=runbook.id,
        live=not reasons,
        missing=missing,
        reasons=tuple(dict.fromkeys(reasons)),
        labels=labels,
        unservable=_unservable(runbook, catalogue),
    )


def _unservable(runbook: Runbook, catalogue: MetricCatalogue) -> tuple[str, ...]:
    """The hypotheses none of whose checks can run: each a check over metrics whose every
    alternative lacks one. At least one hypothesis is always kept."""
    runnable = {c.id: _missing_metrics(runbook, c.id, catalogue) is None for c in runbook.checks}
    found = tuple(h.id for h in runbook.hypotheses if not any(runnable[c] for c in h.checks))
    return found if len(found) < len(runbook.hypotheses) else ()


def _used_keys(runbook: Runbook) -> list[str]:
    """Metric keys the runbook's checks name, in order of first use."""
    keys: dict[str, None] = {}
    for check in runbook.checks:
        for name in check.parameter_names():
            if name in runbook.metrics:
                keys[name] = None
    for parameter in runbook.parameters:
        if parameter.of is not None:
            keys[parameter.of] = None
    return list(keys)


def _missing_metrics(
    runbook: Runbook, check_id: str, catalogue: MetricCatalogue
) -> list[list[str]] | None:
    """A check over metrics that cannot run: per alternative of its query, the metrics it
    lacks (each alternative lacks one). None when the check can run, or reads no metric
    of the catalogue (another tool, or a query naming no mapped metric)."""
    check = runbook.check(check_id)
    if not kind_of(check.tool).metric_names(check, runbook.metrics):
        return None  # it reads no metric of the catalogue (SQL, logs, a session read)
    alternatives = [
        keys
        for part in top_level_alternatives(check.query or "")
        if not (_DEFAULT_HEAD.search(part) or _DEFAULT_TAIL.search(part))
        and (keys := [k for k in template_parameter_names(part) if k in runbook.metrics])
    ]
    absent = [
        [runbook.metrics[k] for k in keys if runbook.metrics[k] not in catalogue.names]
        for keys in alternatives
    ]
    if not alternatives or any(not names for names in absent):
        return None
    return absent


def _gate_reasons(runbook: Runbook, catalogue: MetricCatalogue) -> list[str]:
    """Why the gate cannot run: per gate check with no alternative whose metrics all exist,
    the metrics missing ("no metric A", or "no metric A or B" across alternatives)."""
    assert runbook.gate is not None
    reasons: list[str] = []
    for check_id in runbook.gate.checks:
        absent = _missing_metrics(runbook, check_id, catalogue)
        if absent is None:
            continue
        if len(absent) == 1:
            reasons += [f"no metric {name}" for name in absent[0]]
        else:
            reasons.append(
                "no metric " + " or ".join(dict.fromkeys(_absent_phrase(a) for a in absent))
            )
    return reasons


def _absent_phrase(names: list[str]) -> str:
    """One alternative's missing metrics, as a phrase."""
    return " and ".join(dict.fromkeys(names))


def top_level_alternatives(query: str) -> list[str]:
    """The parts of a PromQL query joined by `or` outside any parentheses or brackets
    (the whole query when there is no such `or`)."""
    parts: list[str] = []
    depth = 0
    start = 0
    for match in re.finditer(r"[()\[\]{}]|\bor\b", query):
        token = match.group()
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth -= 1
        elif depth == 0:
            parts.append(query[start : match.start()])
            start = match.end()
    parts.append(query[start:])
    return parts


@dataclass(frozen=True)
class Discovery:
    """Every runbook's status against one catalogue, read at `read_at`."""

    statuses: Mapping[str, RunbookStatus]
    read_at: datetime

    def live(self, runbooks: RunbookSet) -> RunbookSet:
        """The runbooks to match questions against: the live ones (and those discovery did
        not judge: loaded since), with each subject label narrowed to the labels present."""
        kept: list[Runbook] = []
        for runbook in runbooks.runbooks.values():
            status = self.statuses.get(runbook.id)
            if status is None:
                kept.append(runbook)
            elif status.live:
                kept.append(_narrowed(runbook, status))
        return RunbookSet(kept, runbooks.errors)

    def off(self) -> list[RunbookStatus]:
        return [s for s in self.statuses.values() if not s.live]


def discover(runbooks: RunbookSet, catalogue: MetricCatalogue) -> Discovery:
    """Judge every loaded runbook against the catalogue."""
    return Discovery(
        statuses={r.id: judge(r, catalogue) for r in runbooks.runbooks.values()},
        read_at=datetime.now(UTC),
    )


def _narrowed(runbook: Runbook, status: RunbookStatus) -> Runbook:
    update: dict[str, object] = {}
    if status.labels:
        update["parameters"] = [_narrow(p, status.labels.get(p.name)) for p in runbook.parameters]
    if status.unservable:
        update["hypotheses"] = [h for h in runbook.hypotheses if h.id not in status.unservable]
    return runbook.model_copy(update=update) if update else runbook


def _narrow(parameter: Parameter, present: tuple[str, ...] | None) -> Parameter:
    if not present or parameter.source != "label":
        return parameter
    default = present[0] if len(present) == 1 else None
    return parameter.model_copy(
        update={"labels": list(present), "default": default, "options": list(present)}
    )
