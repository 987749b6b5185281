"""A runbook parameter the alert does not carry, looked up in the alert's own series.

A rule that aggregates its subject away (``sum by (datname) (pg_stat_activity_count…)``)
fires with no ``instance``; the series it read still carry one. ONE query over the
expression's own selectors (as the parser renders them, label values escaped), counted by
the labels the missing parameters may come from and by the alert's labels, bounded in
series (``topk``, the tool's limit) and time (its timeout). The rows that agree with every
label of the alert they carry are the alert's; a parameter whose label has one value among
them takes it, one with several or none is left out, and the header says which.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from bot.alerts.expression import Reads
from bot.alerts.mapping import Investigation
from bot.alerts.matching import PARAMETER_LABELS, parameter_pattern
from bot.alerts.words import questions_for
from reasoning_core import Tool, ToolRequest

#: The most series the look-up reads, and how long it may take.
MAX_SERIES = 20
TIMEOUT_SEC = 3.0
#: The most selectors one look-up reads (a rule's expression has a few).
_MAX_SELECTORS = 8
_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class Found:
    """What the look-up made of each missing parameter."""

    investigation: Investigation
    #: parameter -> (label, value) taken from the alert's series.
    taken: dict[str, tuple[str, str]]
    #: parameter -> the values its series have (several: which one is unknown).
    several: dict[str, tuple[str, ...]]


class SeriesLookup:
    """Fills an investigation's missing parameters from the alert's series.

    :param tool: the `prometheus` tool (PROMETHEUS_URL)
    """

    def __init__(self, tool: Tool) -> None:
        self._tool = tool

    async def fill(
        self,
        investigation: Investigation,
        reads: Reads,
        labels: Mapping[str, str],
        *,
        at: datetime | None = None,
    ) -> Found:
        """`investigation` with the parameters its series name once, read at `at` (the
        alert's start: its series were there when it fired; None: now); unchanged when none
        is missing, the expression has no selector, or Prometheus does not answer."""
        unchanged = Found(investigation=investigation, taken={}, several={})
        if not investigation.missing or not reads.selectors:
            return unchanged
        query = lookup_query(reads.selectors, investigation.missing, labels)
        result = await self._tool.run(
            ToolRequest(query=query, time=at, timeout_sec=TIMEOUT_SEC, max_rows=MAX_SERIES)
        )
        if not result.ok:
            return unchanged
        rows = [
            r.get("metric") or {}
            for r in result.rows
            if all(labels[k] == v for k, v in (r.get("metric") or {}).items() if k in labels)
        ]
        return _filled(investigation, rows, labels)


def lookup_query(
    selectors: Sequence[str], missing: Sequence[str], labels: Mapping[str, str]
) -> str:
    """``topk(20, count by (…) (sel1) or count by (…) (sel2))``: the selectors are the
    parser's rendering, the label names checked; no label value is put in it."""
    wanted = [label for p in missing for label in PARAMETER_LABELS.get(p, (p,))]
    by = [
        name
        for name in dict.fromkeys([*wanted, *sorted(labels)])
        if name != "alertname" and _LABEL_NAME.fullmatch(name)
    ]
    grouping = ", ".join(by)
    parts = [f"count by ({grouping}) ({s})" for s in selectors[:_MAX_SELECTORS]]
    return f"topk({MAX_SERIES}, {' or '.join(parts)})"


def _filled(
    investigation: Investigation, rows: Sequence[Mapping[str, str]], labels: Mapping[str, str]
) -> Found:
    params = dict(investigation.parameters)
    sources = dict(investigation.sources)
    taken: dict[str, tuple[str, str]] = {}
    several: dict[str, tuple[str, ...]] = {}
    missing: list[str] = []
    for param in investigation.missing:
        for label in PARAMETER_LABELS.get(param, (param,)):
            values = tuple(sorted({row[label] for row in rows if row.get(label)}))
            if len(values) == 1 and re.fullmatch(parameter_pattern(param), values[0]):
                params[param], sources[param] = values[0], label
                taken[param] = (label, values[0])
            elif len(values) > 1:
                several[param] = values
            if values:
                break
        if param not in taken:
            missing.append(param)
    if not taken:
        return Found(investigation=investigation, taken={}, several=several)
    name = labels.get("alertname", "")
    filled = replace(
        investigation,
        parameters=params,
        sources=sources,
        missing=tuple(missing),
        questions=questions_for(name, params),
    )
    return Found(investigation=filled, taken=taken, several=several)
