"""The bounded change scan: query the neighbourhood, score every series, rank the components.

One range query per target (its series but histogram buckets) over the baseline and the
incident window; at most `ScanLimits.max_queries` queries, `max_series` series and
`budget_sec` seconds in all — whatever a bound cuts is named in `ScanResult.partial`.
Counters (``counters``: by the metadata's type, else a `_total` name) are scored as rates. A
series that changed the same way in the same window a day before (a nightly job, a daily
peak) changes every day at this hour and is left out — one more query per target that
changed, within the same budget; no data a day before leaves the series in. A component's
change is its earliest changed series; components are ranked by their strength, discounted
by how long after the symptom's onset they changed (an effect comes after its cause); a part
that stopped (its target no longer scraped, its process group empty) outranks any that
merely moved, a change still going on outweighs one that already ended, and equal weights go
to the component with more changed series. A counter born in the window (its target scraped
before it) is a change too (`score_appeared`). The symptom's own series — a probe of the
subject, the subject's request latency (`neighbourhood.symptom_series`) — are read but never
candidates: they changed because it broke.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from reasoning_core.changes.components import component_of
from reasoning_core.changes.counters import is_counter, reads_as_counter
from reasoning_core.changes.neighbourhood import (
    Target,
    neighbourhood,
    own_targets,
    quote,
    subject_failure,
    symptom_series,
)
from reasoning_core.changes.score import (
    MAX_SCORE,
    SeriesChange,
    counter_rate,
    finite,
    score_appeared,
    score_series,
)
from reasoning_core.i18n import N_, gettext, ngettext
from reasoning_core.tools.base import ToolRequest, ToolResult

#: A change this long after the symptom's onset weighs 1/e of one at the onset.
LAG_SCALE = timedelta(seconds=60)
#: What a change that ended before the scan weighs against one still going on.
ENDED_FACTOR = 0.5
#: What a host's total weighs against a part's own series (`host_total`): the host's CPU
#: idle falls because a process group's CPU rose, and that group is what changed.
HOST_FACTOR = 0.5
#: What the subject's own failure weighs (`_weight`), in `MAX_SCORE`s: more than any part
#: that merely moved, less than one that stopped (2).
OWN_FAILURE_FACTOR = 1.5
#: Points per range query: the scan's resolution.
POINTS = 240
#: How a component's first changed series is named, by its direction.
_MOVED = {
    "up": N_("{component} ({series} rose from {at})"),
    "down": N_("{component} ({series} fell from {at})"),
    "appeared": N_("{component} ({series} appeared at {at})"),
}
#: The step when the scrape interval is not known: a few scrapes of a common interval.
MIN_STEP_SEC = 15.0
#: The finest step, whatever the scrape interval says.
FINEST_STEP_SEC = 1.0
#: Series whose fall to 0 says the part itself stopped (rank.stopped).
_STOPPED_SIGNS = frozenset({"up", "namedprocess_namegroup_num_procs"})
#: What changes every day at this hour is read this long before.
DAY = timedelta(days=1)


class RangeTool(Protocol):
    """Runs one PromQL request (the prometheus tool)."""

    async def run(self, request: ToolRequest) -> ToolResult: ...


@dataclass(frozen=True)
class ScanLimits:
    """The scan's bounds (settings CHANGE_SCAN_*)."""

    max_series: int = 2000
    max_queries: int = 12
    budget_sec: float = 15.0
    threshold: float = 6.0
    #: Without a known symptom onset: the incident window is the last `incident`.
    incident: timedelta = timedelta(minutes=4)
    #: With one: the window opens `lead` before it (a cause comes first).
    lead: timedelta = timedelta(seconds=150)
    baseline: timedelta = timedelta(minutes=15)


@dataclass(frozen=True)
class ChangedSeries:
    """One series that changed, with the labels that name it and the points it was scored
    on (a counter's rate), for the chart."""

    labels: Mapping[str, str]
    change: SeriesChange
    points: tuple[tuple[datetime, float], ...] = ()
    #: The subject's own failure (`neighbourhood.subject_failure`): its own error answers.
    subject_failure: bool = False
    #: Scored as a counter's rate (`reads_as_counter`).
    counter: bool = False

    @property
    def name(self) -> str:
        return self.labels.get("__name__", "?")


@dataclass(frozen=True)
class ComponentChange:
    """A component's change: its earliest changed series first."""

    component: str
    series: tuple[ChangedSeries, ...]
    weight: float

    @property
    def onset(self) -> datetime:
        return self.series[0].change.onset


@dataclass(frozen=True)
class ScanWindow:
    """The range the scan read: baseline from `start`, the incident from `incident_start`."""

    start: datetime
    end: datetime
    incident_start: datetime
    step_sec: float


@dataclass
class ScanResult:
    """What the scan found and what it looked at."""

    components: list[ComponentChange] = field(default_factory=list)
    series_seen: int = 0
    targets: list[Target] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    #: Changed series left out because they changed the same way a day before.
    daily: int = 0
    #: The range read (None: nothing was read).
    window: ScanWindow | None = None
    #: The symptom's onset the components were ranked against (None: not known).
    symptom_onset: datetime | None = None
    #: The symptom as the scan read it: the most changed of the subject's own symptom
    #: series (`symptom_series`; None: none of them changed, or the subject has none).
    symptom: ChangedSeries | None = None

    def describe(self, language: str) -> str:
        """One line: the candidates ("what changed first: …"), or what was looked at."""
        looked = ngettext(
            language,
            "looked at {series} series of {n} target",
            "looked at {series} series of {n} targets",
            len(self.targets),
        ).format(series=self.series_seen, n=len(self.targets))
        if self.components:
            first = ", ".join(
                gettext(language, _MOVED[_how(c.series[0].change)]).format(
                    component=c.component, series=c.series[0].name, at=f"{c.onset:%H:%M:%S}"
                )
                for c in self.components[:3]
            )
            text = gettext(language, "what changed first: {first}; {looked}").format(
                first=first, looked=looked
            )
        else:
            text = gettext(language, "{looked}; none changed before the symptom").format(
                looked=looked
            )
        if self.daily:
            text += "; " + ngettext(
                language,
                "{n} series that changes every day at this hour left out",
                "{n} series that change every day at this hour left out",
                self.daily,
            ).format(n=self.daily)
        if self.partial:
            text += " " + gettext(language, "(partial: {why})").format(why="; ".join(self.partial))
        return text


def _how(change: SeriesChange) -> str:
    """How a series changed, as `_MOVED` words it."""
    return "appeared" if change.appeared else change.direction


async def scan(
    tool: RangeTool,
    targets: Sequence[Target],
    subject: Mapping[str, str],
    *,
    at: datetime,
    symptom_onset: datetime | None = None,
    types: Mapping[str, str] | None = None,
    limits: ScanLimits | None = None,
    scrape_interval: float | None = None,
) -> ScanResult:
    """Scan the subject's neighbourhood for series that changed in the incident window.

    The step is the slowest scrape interval (`scrape_interval`; else `MIN_STEP_SEC`): one
    sample a step, so a counter's rate is never read between two of its scrapes, and a change
    is seen after three scrapes, not three quarter-minutes (an alert with a short `for` fires
    before a 15 s step has seen it sustained)."""
    limits = limits or ScanLimits()
    started = time.monotonic()
    chosen, left_out = neighbourhood(targets, subject, max_targets=limits.max_queries)
    own = own_targets(chosen, subject)
    result = ScanResult(targets=list(chosen))
    if left_out:
        result.partial.append(f"{left_out} targets on the host left out (the query limit)")
    incident_start = (
        symptom_onset - limits.lead if symptom_onset is not None else at - limits.incident
    )
    start = incident_start - limits.baseline
    finest = max(FINEST_STEP_SEC, scrape_interval) if scrape_interval else MIN_STEP_SEC
    step = max(finest, (at - start).total_seconds() / POINTS)
    window = ScanWindow(start=start, end=at, incident_start=incident_start, step_sec=step)
    result.window = window
    result.symptom_onset = symptom_onset
    changed: dict[Target, list[ChangedSeries]] = defaultdict(list)
    types = types or {}
    for index, target in enumerate(chosen):
        remaining = limits.budget_sec - (time.monotonic() - started)
        if remaining <= 0:
            result.partial.append(f"{len(chosen) - index} targets not read (the time budget)")
            break
        answer = await tool.run(
            ToolRequest(
                query=target.selector(),
                start=start,
                end=at,
                step_sec=step,
                timeout_sec=max(1.0, remaining),
            )
        )
        if not answer.ok:
            result.partial.append(f"{target.job}: {answer.error}")
            continue
        if answer.truncated:
            result.partial.append(f"{target.job}: {answer.truncation_note}")
        # the target's first sample in the range: scraped before the window, and since when
        known_from = min(map(_first_sample, answer.rows), default=at)
        scraped_before = known_from < incident_start
        for row in answer.rows:
            if result.series_seen >= limits.max_series:
                result.partial.append(f"only the first {limits.max_series} series scored")
                break
            result.series_seen += 1
            labels = _labels(row)
            raw = raw_points(row)
            counter = reads_as_counter(labels.get("__name__", ""), raw, types, incident_start)
            points = counter_rate(raw) if counter else raw
            found = _scored(
                points,
                raw,
                window,
                threshold=limits.threshold,
                counter=counter,
                born=scraped_before,
                known_from=known_from,
            )
            if found is None:
                continue
            item = ChangedSeries(
                labels=labels,
                change=found,
                points=tuple(points),
                subject_failure=subject_failure(labels, target, own),
                counter=counter,
            )
            if symptom_series(labels, target, own):
                # the symptom itself, not what changed around it: kept for the chart
                result.symptom = _stronger(result.symptom, item)
                continue
            changed[target].append(item)
        else:
            continue
        break
    day_before = _Window(start - DAY, at - DAY, step, incident_start - DAY)
    kept = await _not_daily(
        tool, changed, day_before, result=result, limits=limits, started=started
    )
    result.components = rank(kept, symptom_onset=symptom_onset)
    return result


def _stronger(kept: ChangedSeries | None, item: ChangedSeries) -> ChangedSeries:
    """Of two changed symptom series, the one changed now, then the stronger (the first
    kept on a tie)."""
    if kept is None:
        return item
    return max(kept, item, key=lambda c: (c.change.ongoing, c.change.score))


#: The share of the baseline a series must cover for its baseline to say what is normal.
MIN_COVERAGE = 0.5


def _young(
    points: Sequence[tuple[datetime, float]], window: ScanWindow, known_from: datetime
) -> bool:
    """Was the series born late in the baseline its target has (`known_from`: the target's
    first sample in the range), covering less than `MIN_COVERAGE` of it? A route's 500s born
    with the previous incident a minute before the window have that incident as their whole
    baseline: their return to nothing is not what changed now."""
    if not points or points[0][0] >= window.incident_start:
        return False  # no baseline at all: score_change says nothing, score_appeared may
    baseline = (window.incident_start - max(window.start, known_from)).total_seconds()
    covered = (window.incident_start - points[0][0]).total_seconds()
    return covered < MIN_COVERAGE * baseline


def _scored(
    points: Sequence[tuple[datetime, float]],
    raw: Sequence[tuple[datetime, float]],
    window: ScanWindow,
    *,
    threshold: float,
    counter: bool,
    born: bool,
    known_from: datetime,
) -> SeriesChange | None:
    """One series' change in the window: its move (`points`: a gauge's values, a
    `counter`'s rate, of its `raw` samples), else — a counter, `born` (its target scraped
    before the window) — its birth in the window; nothing for a series too young for its
    baseline (`_young`)."""
    if _young(points, window, known_from):
        return None  # its "normal" is the tail of whatever it was born in, not normal
    found = score_series(
        points,
        raw=raw,
        counter=counter,
        incident_start=window.incident_start,
        threshold=threshold,
    )
    if found is None and born and counter:
        found = score_appeared(
            raw,
            incident_start=window.incident_start,
            end=window.end,
            step=timedelta(seconds=window.step_sec),
        )
    return found


@dataclass(frozen=True)
class _Window:
    start: datetime
    end: datetime
    step_sec: float
    incident_start: datetime


async def _not_daily(
    tool: RangeTool,
    changed: Mapping[Target, list[ChangedSeries]],
    day_before: _Window,
    *,
    result: ScanResult,
    limits: ScanLimits,
    started: float,
) -> list[ChangedSeries]:
    """The changed series but those that changed the same way a day before (counted in
    `result.daily`); a target the budget leaves no time for keeps its series."""
    kept: list[ChangedSeries] = []
    for target, items in changed.items():
        remaining = limits.budget_sec - (time.monotonic() - started)
        if remaining <= 0:
            result.partial.append(f"{target.job}: not compared with a day before (the budget)")
            kept.extend(items)
            continue
        answer = await tool.run(
            ToolRequest(
                query=target.selector(),
                start=day_before.start,
                end=day_before.end,
                step_sec=day_before.step_sec,
                timeout_sec=max(1.0, remaining),
            )
        )
        daily = _daily(items, answer, day_before.incident_start, limits.threshold)
        result.daily += len(daily)
        kept.extend(item for item in items if id(item) not in daily)
    return kept


def _labels(row: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (row.get("metric") or {}).items()}


def _first_sample(row: Mapping[str, Any]) -> datetime:
    """When the range query's row has its first sample (never: the far future)."""
    values = row.get("values") or []
    return (
        datetime.fromtimestamp(float(values[0][0]), tz=UTC)
        if values
        else datetime.max.replace(tzinfo=UTC)
    )


def series_points(row: Mapping[str, Any], *, counter: bool) -> list[tuple[datetime, float]]:
    """A range query's row as the points the scan scores (a counter's as its rate)."""
    points = raw_points(row)
    return counter_rate(points) if counter else points


def raw_points(row: Mapping[str, Any]) -> list[tuple[datetime, float]]:
    """A range query's row as its finite samples, in time order."""
    return _points(row.get("values") or [])


def _daily(
    items: Sequence[ChangedSeries],
    day_before: ToolResult,
    incident_start: datetime,
    threshold: float,
) -> set[int]:
    """Which of `items` (by id) changed the same way in the same window a day before."""
    if not day_before.ok:
        return set()
    then: dict[frozenset[tuple[str, str]], list[tuple[datetime, float]]] = {}
    for row in day_before.rows:
        then[frozenset(_labels(row).items())] = raw_points(row)
    daily = set()
    for item in items:
        raw = then.get(frozenset(item.labels.items()))
        if not raw:
            continue
        counter = item.counter
        found = score_series(
            counter_rate(raw) if counter else raw,
            raw=raw,
            counter=counter,
            incident_start=incident_start,
            threshold=threshold,
        )
        if found is not None and found.direction == item.change.direction:
            daily.add(id(item))
    return daily


def rank(
    changed: Sequence[ChangedSeries], *, symptom_onset: datetime | None
) -> list[ComponentChange]:
    """Components by weight: the strongest series' score, discounted by its lag after the
    symptom's onset (or after the earliest change when the onset is unknown); equal weights
    go to the broader change now (`_breadth`)."""
    if not changed:
        return []
    reference = symptom_onset or min(c.change.onset for c in changed)
    grouped: dict[str, list[ChangedSeries]] = defaultdict(list)
    for item in changed:
        grouped[component_of(item.labels)].append(item)
    components = []
    for name, items in grouped.items():
        ordered = sorted(items, key=lambda c: (c.change.onset, -c.change.score))
        # rounded: a capped score's float noise (99.99999999999999) is no lesser change
        weight = round(max(_weight(c) * _lag_factor(c.change.onset, reference) for c in items), 6)
        components.append(ComponentChange(component=name, series=tuple(ordered), weight=weight))
    return sorted(
        components, key=lambda c: (-c.weight, *(-n for n in _breadth(c)), c.onset, c.component)
    )


def _breadth(component: ComponentChange) -> tuple[int, int]:
    """How many of its series changed, those still changed at the window's end first: of
    two parts as strongly changed, the one changed now across more of its series (an
    earlier incident's tail has ended in most of its own)."""
    ongoing = sum(1 for s in component.series if s.change.ongoing)
    return ongoing, len(component.series)


def stopped(item: ChangedSeries) -> bool:
    """The series says its part stopped: its target no longer answers the scrape (`up` fell
    to 0) or its process group has no process left."""
    if item.change.direction != "down" or item.change.after > 0:
        return False
    return item.name in _STOPPED_SIGNS


def _weight(item: ChangedSeries) -> float:
    """A part that stopped outweighs any part that merely moved: what depends on it moves
    because it stopped (a database's transactions fall when the service that makes them
    dies), so its own stop is the strongest change there is. The subject answering with
    its own errors (`subject_failure`: a 500, a 404, where a dependency's failure is a 503)
    comes next: what stops downstream (the database's writes when a release fails every
    checkout before its UPDATE) stops because it did. A change that already ended
    weighs `ENDED_FACTOR` of one still going on: the symptom is going on now. A host's
    totals (`host_total`) weigh `HOST_FACTOR`: they move because a process on it moved."""
    if stopped(item):
        weight = MAX_SCORE * 2
    elif item.subject_failure and item.change.direction == "up":
        weight = MAX_SCORE * OWN_FAILURE_FACTOR
    else:
        weight = item.change.score
    if host_total(item):
        weight *= HOST_FACTOR
    return weight if item.change.ongoing else weight * ENDED_FACTOR


def host_total(item: ChangedSeries) -> bool:
    """Is the series a host's total (the node exporter's CPU, memory, load, network, not
    its disks: a full disk is a part of its own) rather than one part's?"""
    return item.name.startswith("node_") and component_of(item.labels) != "disk"


def _lag_factor(onset: datetime, reference: datetime) -> float:
    lag = (onset - reference) / LAG_SCALE
    return 1.0 if lag <= 0 else math.exp(-lag)


def _points(values: Sequence[Any]) -> list[tuple[datetime, float]]:
    raw = [(datetime.fromtimestamp(float(t), tz=UTC), v) for t, v in values]
    return finite(raw)


def targets_from_up(rows: Sequence[Mapping[str, Any]]) -> list[Target]:
    """The scrape targets an instant `up` query names."""
    found = {
        Target(instance=str(m.get("instance", "")), job=str(m.get("job", "")))
        for m in (r.get("metric") or {} for r in rows)
        if m.get("instance")
    }
    return sorted(found, key=lambda t: (t.job, t.instance))


#: Every scrape target but the monitoring system's own (Prometheus and Alertmanager scraping
#: themselves): its work grows with every incident's queries and alerts, whytree's included.
TARGETS_QUERY = "up unless on (instance, job) (prometheus_build_info or alertmanager_build_info)"


#: The slowest target's scrape interval, as Prometheus measures it of itself.
SCRAPE_INTERVAL_QUERY = 'max(prometheus_target_interval_length_seconds{quantile="0.5"})'


async def read_scrape_interval(tool: RangeTool, *, at: datetime) -> float | None:
    """The slowest scrape interval Prometheus keeps (seconds), or None when it does not say
    (it does not scrape itself, the query failed)."""
    answer = await tool.run(ToolRequest(query=SCRAPE_INTERVAL_QUERY, time=at))
    value = answer.rows[0].get("value") if answer.ok and answer.rows else None
    if isinstance(value, int | float) and math.isfinite(value) and value > 0:
        return float(value)
    return None


async def read_targets(tool: RangeTool, *, at: datetime) -> list[Target]:
    """The targets Prometheus scraped at `at` (`TARGETS_QUERY`); empty on failure."""
    answer = await tool.run(ToolRequest(query=TARGETS_QUERY, time=at))
    return targets_from_up(answer.rows) if answer.ok else []


__all__ = [
    "ScanLimits",
    "ScanResult",
    "ScanWindow",
    "is_counter",
    "quote",
    "raw_points",
    "read_scrape_interval",
    "read_targets",
    "reads_as_counter",
    "scan",
    "series_points",
]
