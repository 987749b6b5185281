"""Which runbook investigates an alert: by what its rule reads, the mapping file on top.

In order: a meta-alert (ALERT_QUIET: Watchdog, InfoInhibitor, severity none/info) is
not investigated nor posted; an entry of the mapping file (ALERT_MAPPING) for the
alert's name decides as it always did; otherwise the rule's expression
(bot/alerts/expression.py) goes to the runbooks whose declared ``metrics`` it reads,
ranked by how many (the more specific runbook first on a tie). The runbook's
parameters come from the alert's labels under the names the community's rule
collections use (`PARAMETER_LABELS`); a parameter whose label the alert does not carry
is left out, and the report says so; a label value that is not a plain name is refused
as in the mapping file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from bot.alerts.expression import Reads
from bot.alerts.mapping import DEFAULT_PATTERN, AlertMapping, Investigation, Refusal
from bot.alerts.words import questions_for
from reasoning_core import Runbook

#: A runbook parameter -> the alert labels that may carry its value, in order of preference.
#: Any other parameter is read from the label of its own name.
PARAMETER_LABELS: Mapping[str, tuple[str, ...]] = {
    "instance": ("instance",),
    "target": ("instance", "target"),
    "job": ("job",),
    "service": ("service", "job"),
    "namespace": ("namespace", "exported_namespace"),
    "pod": ("pod", "pod_name"),
    "container": ("container", "name"),
    "host": ("instance", "node", "nodename"),
    "groupname": ("groupname",),
    "database": ("datname",),
    "datname": ("datname",),
    "mountpoint": ("mountpoint",),
    "device": ("device",),
}
#: Longer than a plain name: a probe target is a URL.
_PATTERNS: Mapping[str, str] = {"target": r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}"}


def parameter_pattern(parameter: str) -> str:
    """The pattern a label value must match to become the parameter."""
    return _PATTERNS.get(parameter, DEFAULT_PATTERN)


@dataclass(frozen=True, slots=True)
class RunbookReads:
    """A runbook as matching sees it: the metrics it reads, the parameters an alert fills."""

    id: str
    metrics: frozenset[str]
    parameters: tuple[str, ...]
    #: The metrics it declares itself (not those of the check sets it includes).
    own: frozenset[str] = frozenset()


class RunbookIndex:
    """The loaded runbooks that declare metrics, to rank against an expression."""

    def __init__(self, runbooks: Iterable[Runbook]) -> None:
        self._runbooks = [
            RunbookReads(
                id=r.id,
                metrics=frozenset(r.metrics.values()),
                own=r.own_metrics,
                parameters=tuple(p.name for p in r.parameters if p.source == "entity"),
            )
            for r in runbooks
            if r.metrics
        ]

    def ranked(self, reads: Reads) -> list[RunbookReads]:
        """The runbooks that read a metric the expression reads: most shared among the
        metrics they declare themselves first, then among all they read (a check set's
        too), then the one reading fewer metrics besides (the more specific), then by id."""
        scored = [
            (len(r.own & reads.metrics), len(r.metrics & reads.metrics), r) for r in self._runbooks
        ]
        hits = [hit for hit in scored if hit[1]]
        hits.sort(key=lambda hit: (-hit[0], -hit[1], len(hit[2].own), hit[2].id))
        return [r for _, _, r in hits]


@dataclass(frozen=True, slots=True)
class QuietAlerts:
    """ALERT_QUIET: alert names and ``label=value`` pairs never investigated nor posted."""

    names: frozenset[str]
    labels: frozenset[tuple[str, str]]

    @classmethod
    def parse(cls, text: str) -> QuietAlerts:
        names: set[str] = set()
        labels: set[tuple[str, str]] = set()
        for item in (part.strip() for part in text.split(",")):
            if "=" in item:
                key, _, value = item.partition("=")
                labels.add((key.strip(), value.strip()))
            elif item:
                names.add(item)
        return cls(names=frozenset(names), labels=frozenset(labels))

    def quiet(self, labels: Mapping[str, str]) -> bool:
        return labels.get("alertname", "") in self.names or any(
            labels.get(key) == value for key, value in self.labels
        )


DEFAULT_QUIET = "Watchdog,InfoInhibitor,severity=none,severity=info"


class AlertRouter:
    """An alert's labels and rule expression -> its investigation, or why there is none."""

    def __init__(
        self,
        *,
        mapping: AlertMapping,
        index: RunbookIndex,
        quiet: QuietAlerts | None = None,
    ) -> None:
        self._mapping = mapping
        self._index = index
        self._quiet = quiet if quiet is not None else QuietAlerts.parse(DEFAULT_QUIET)

    @property
    def mapping(self) -> AlertMapping:
        return self._mapping

    def quiet(self, labels: Mapping[str, str]) -> bool:
        """A meta-alert (ALERT_QUIET): never investigated nor posted."""
        return self._quiet.quiet(labels)

    def needs_expression(self, labels: Mapping[str, str]) -> bool:
        """Whether the rule's expression decides (not a meta-alert, no mapping entry)."""
        return not self._quiet.quiet(labels) and self._mapping.rule_for(labels) is None

    def resolve(
        self,
        labels: Mapping[str, str],
        reads: Reads | None,
        *,
        expression: str | None = None,
        present: Literal["labels", "all"] = "labels",
    ) -> Investigation | Refusal:
        """`reads`: the parsed expression (None: none found, or `expression` did not parse).
        `present="all"`: any label may be there (a rule file's check, where the expression
        keeps its series' labels), so a parameter takes its first candidate label."""
        name = labels.get("alertname", "")
        if self._quiet.quiet(labels):
            return Refusal(kind="meta", alertname=name)
        if self._mapping.rule_for(labels) is not None:
            return self._mapping.resolve(labels)
        if reads is None:
            why: Literal["no_expression", "unparsable"]
            why = "unparsable" if expression else "no_expression"
            return Refusal(kind="unmapped", alertname=name, reason=why, expression=expression)
        ranked = self._index.ranked(reads)
        if not ranked:
            return Refusal(
                kind="unmapped", alertname=name, reason="unread", expression=reads.expression
            )
        runbook = ranked[0]
        params: dict[str, str] = {}
        sources: dict[str, str] = {}
        missing: list[str] = []
        for param in runbook.parameters:
            candidates = PARAMETER_LABELS.get(param, (param,))
            label = next((c for c in candidates if c in labels), None)
            if label is None and present == "all":
                label = candidates[0]
                sources[param] = label
                continue
            if label is None:
                missing.append(param)
                continue
            value = labels[label]
            if not re.fullmatch(parameter_pattern(param), value):
                return Refusal(kind="bad_label", alertname=name, label=label)
            params[param] = value
            sources[param] = label
        identifying = {
            "alertname": name,
            **{label: labels[label] for label in sources.values() if label in labels},
        }
        return Investigation(
            runbook=runbook.id,
            parameters=params,
            questions=questions_for(name, params),
            labels=identifying,
            sources=sources,
            missing=tuple(missing),
            alternatives=tuple(r.id for r in ranked[1:]),
            expression=reads.expression,
        )
