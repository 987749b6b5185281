"""The call graph a service mesh exports, read from a Prometheus check's rows.

An Istio sidecar counts every request twice: the callee's side (`reporter="destination"`:
what the service answered, and how fast) and the caller's (`reporter="source"`: what the
call cost the caller, the way there included). The `mesh_walk` check's query (runbooks/
checksets/mesh.yaml) returns, over the baseline and recent windows, one series per
`measure`:

* `latency`, `errors` — each workload's own answers, over all its callers (p95 in ms, the
  5xx share), by `destination_workload`;
* `call_latency`, `call_errors` — each call edge from the caller's side (p95 in ms, the
  share of calls that failed or got no answer), by `source_workload` and
  `destination_workload`;
* `rate` — each edge's requests per second, from the callee's side (who calls whom).

Each measure is judged against its own baseline (before the recent window): changed from
the first sample of `sustain` in a row beyond the limit (latency at least `min_ratio`
times its baseline and `min_ms` above it; errors `min_rise` above their baseline share)
in the run of samples beyond it that reaches now (one sample back under it does not end a
run), or, fewer samples so far, every one of them twice beyond it (a change that has just
begun): a rise that went back is an earlier incident's tail, and one that came again began
the second time.
A series the graph cannot place — a label missing, a workload calling itself, an unknown
measure — is left out and said in `CallGraph.ignored`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from statistics import median

from reasoning_core.runbooks.rows import Row, as_datetime, as_number

__all__ = ["CallGraph", "Change", "Limits", "Side", "read_call_graph"]

#: Measures of a workload's own answers, and of an edge (caller -> callee).
OWN = ("latency", "errors")
CALL = ("call_latency", "call_errors")
RATE = "rate"
#: Istio's name for a caller outside the mesh (no sidecar): an entry into the mesh.
OUTSIDE = "unknown"


@dataclass(frozen=True)
class Limits:
    """When a measure has changed (module docstring)."""

    min_ratio: float = 1.5
    min_ms: float = 20.0
    min_rise: float = 0.02
    sustain: int = 2


@dataclass(frozen=True)
class Change:
    """One measure of one side: its baseline level and, if it changed, since when and to
    what level (the median from the onset on)."""

    measure: str  # "latency" (ms) or "errors" (share 0-1)
    baseline: float
    level: float
    onset: datetime | None

    @property
    def changed(self) -> bool:
        return self.onset is not None


@dataclass
class Side:
    """The measures of one workload's answers, or of one edge's calls."""

    latency: Change | None = None
    errors: Change | None = None

    def changes(self) -> list[Change]:
        """The measures that changed, the earliest first."""
        found = [c for c in (self.latency, self.errors) if c is not None and c.onset]
        return sorted(found, key=lambda c: (c.onset, c.measure))

    @property
    def changed(self) -> bool:
        return bool(self.changes())

    @property
    def onset(self) -> datetime | None:
        found = self.changes()
        return found[0].onset if found else None


@dataclass
class CallGraph:
    """Who calls whom, each workload's own answers, each edge's calls, what was left out."""

    #: workload -> its answers (the callee's side, over all its callers)
    workloads: dict[str, Side] = field(default_factory=dict)
    #: (caller, callee) -> the calls (the caller's side)
    calls: dict[tuple[str, str], Side] = field(default_factory=dict)
    #: (caller, callee) -> requests per second in the recent window (the callee's side)
    rates: dict[tuple[str, str], float] = field(default_factory=dict)
    #: what was left out, worded by the walk: ("missing", label, count),
    #: ("self", workload, 1), ("measure", name, count)
    ignored: list[tuple[str, str, int]] = field(default_factory=list)

    def callees(self, workload: str) -> list[str]:
        edges = set(self.calls) | set(self.rates)
        return sorted({c for s, c in edges if s == workload})

    def callers(self, workload: str) -> list[str]:
        edges = set(self.calls) | set(self.rates)
        return sorted({s for s, c in edges if c == workload})

    def knows(self, workload: str) -> bool:
        return workload in self.workloads or bool(self.callees(workload) or self.callers(workload))

    def entries(self) -> list[str]:
        """Where requests come into the mesh: the workloads called from outside it (Istio's
        `unknown` caller: a proxy or client without a sidecar), else those no workload
        calls."""
        outside = [c for c in self.callees(OUTSIDE) if c != OUTSIDE]
        if outside:
            return outside
        known = set(self.workloads) | {w for edge in (*self.calls, *self.rates) for w in edge}
        return sorted(w for w in known - {OUTSIDE} if not self.callers(w))


def read_call_graph(
    rows: Sequence[Row],
    recent_start: datetime,
    limits: Limits,
    *,
    columns: Mapping[str, str] | None = None,
) -> CallGraph:
    """The graph of the rows (module docstring). `columns` may rename `measure`,
    `source_workload`, `destination_workload`, `dt`."""
    names = {
        "measure": "measure",
        "source": "source_workload",
        "destination": "destination_workload",
        "time": "dt",
        **(columns or {}),
    }
    series: dict[tuple[str, str, str], list[tuple[datetime, float]]] = {}
    missing: dict[str, set[tuple[str, str, str]]] = {}
    selves: set[str] = set()
    unknown: dict[str, int] = {}
    grid: set[datetime] = set()
    for row in rows:
        at, value = as_datetime(row.get(names["time"])), as_number(row.get("value"))
        if at is None or value is None:
            continue
        grid.add(at)
        measure = str(row.get(names["measure"]) or "")
        source = str(row.get(names["source"]) or "")
        destination = str(row.get(names["destination"]) or "")
        key = (measure, source, destination)
        if measure not in (*OWN, *CALL, RATE):
            unknown[measure or "?"] = unknown.get(measure or "?", 0) + 1
            continue
        needed = (
            [names["destination"]] if measure in OWN else [names["source"], names["destination"]]
        )
        absent = [label for label in needed if not row.get(label)]
        if absent:
            missing.setdefault(absent[0], set()).add(key)
            continue
        if measure not in OWN and source == destination:
            selves.add(source)
            continue
        series.setdefault(key if measure not in OWN else (measure, "", destination), []).append(
            (at, value)
        )
    graph = CallGraph()
    times = sorted(grid)
    for (measure, source, destination), samples in sorted(series.items()):
        if measure == RATE:
            recent = [v for at, v in samples if at >= recent_start]
            graph.rates[(source, destination)] = sum(recent) / len(recent) if recent else 0.0
            continue
        change = _change(measure, samples, times, recent_start, limits)
        side = (
            graph.workloads.setdefault(destination, Side())
            if measure in OWN
            else graph.calls.setdefault((source, destination), Side())
        )
        if measure.endswith("latency"):
            side.latency = change
        else:
            side.errors = change
    graph.ignored += [("missing", label, len(keys)) for label, keys in sorted(missing.items())]
    graph.ignored += [("self", workload, 1) for workload in sorted(selves)]
    graph.ignored += [("measure", name, count) for name, count in sorted(unknown.items())]
    return graph


def _change(
    measure: str,
    samples: list[tuple[datetime, float]],
    times: list[datetime],
    recent_start: datetime,
    limits: Limits,
) -> Change | None:
    """One series against its baseline. Errors are a share whose series exists only while
    some request fails: a time without a sample is 0. Latency without a baseline (an edge
    new in the window) is not judged."""
    values = dict(samples)
    latency = measure.endswith("latency")
    if not latency:
        values = {at: values.get(at, 0.0) for at in times}
    before = [v for at, v in sorted(values.items()) if at < recent_start]
    after = [(at, v) for at, v in sorted(values.items()) if at >= recent_start]
    if not after or (latency and not before):
        return None
    base = median(before) if before else 0.0
    limit = (
        max(base * limits.min_ratio, base + limits.min_ms) if latency else base + limits.min_rise
    )
    kind = "latency" if latency else "errors"
    if after[-1][1] < limit:
        # Not past the limit now: whatever rose in the window went back — an earlier
        # incident's tail, not what explains the symptom asked about now.
        return Change(kind, base, median(v for _, v in after), None)
    # The change present now began where the run of samples past the limit that reaches
    # the last one began (one sample back under it, between two past it, does not end a
    # run): a rise that went back and came again began the second time — the first was an
    # earlier incident, and its onset would make this one's cause look like its effect.
    start = len(after) - 1
    while start > 0 and (
        after[start - 1][1] >= limit or (start >= 2 and after[start - 2][1] >= limit)  # noqa: PLR2004
    ):
        start -= 1 if after[start - 1][1] >= limit else 2
    run = after[start:]
    # `sustain` samples, or, fewer so far, every one twice past the limit (a change that
    # has just begun, as the alert asking about it has)
    if len(run) >= limits.sustain or all(v >= 2 * limit for _, v in run):
        level = median(v for _, v in run)
        return Change(kind, base, level if math.isfinite(level) else base, run[0][0])
    return Change(kind, base, median(v for _, v in after), None)
