"""The `mesh_walk` verdict: follow the calls from the symptom's service to the deepest one
whose own measures changed.

A fault in a deep service makes its callers slow too: their own answers wait on it. So the
walk starts at the subject (the workload the question or alert names) and, at each
workload, looks at its calls (the caller's side, runbooks/callgraph.py):

* a call that changed no later than the workload's own answers (plus `slack_seconds`)
  explains them: the walk goes on to its callee (the earliest such call — but when the
  workload's own errors rose, the earliest call whose errors rose: failures are explained
  by failures, and a call that only got slower is a side-show; a callee already on the
  path — a cycle — is not followed, and said);
* the callee's own answers changed too: the walk goes on from there;
* the call changed while the callee answers as before: the trouble is on the way — into
  that callee (one call changed), or out of the caller (all its calls changed, their
  callees unchanged);
* none of its calls changed and its own answers did: the time (or the errors) is its own.

At the subject, when neither its answers nor its calls changed, the calls *into* it are
read: changed from its callers' side, unchanged from its own, the trouble is on the way
into it. Nothing changed: refuted.

Without a subject (a probe of the shop's front door, a question about the whole system)
the walk starts where requests come into the mesh (`CallGraph.entries`): the entry whose
own answers changed first, else the first whose walk finds a change. At most `max_depth`
hops (the depth of a "because" chain, LINK_DEPTH's default); a walk cut there says so and
is weaker.

The line says the path and the origin's change: "front → checkout → stock: stock's own
latency rose first, 14:02:10 (p95 6 ms → 480 ms); its calls did not change: the time is
its own". The data carries `series_name` (the origin: the part the report names),
`path`, `onset`, `signal` and `origin_reason`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Evidence
from reasoning_core.runbooks.callgraph import OUTSIDE, CallGraph, Change, Limits, Side
from reasoning_core.runbooks.callgraph import read_call_graph as _read
from reasoning_core.runbooks.rows import Row
from reasoning_core.runbooks.rules import MeshWalkRule
from reasoning_core.runbooks.strength import fmt, inconclusive
from reasoning_core.runbooks.timewindow import TimeWindow

__all__ = ["Walk", "mesh_walk_rows", "walk"]

#: A walk cut at its depth limit: the origin may lie deeper, the evidence is this much weaker.
CUT_FACTOR = 0.6
ARROW = " → "

_LINES: dict[str, str] = {
    "own": N_("{path}: {origin}'s own {signal} rose first, {onset} ({detail})"),
    "own_time": N_("; its calls did not change ({calls}): the time is its own"),
    "own_errors": N_("; its calls did not change ({calls}): the errors are its own"),
    "leaf": N_("; it calls no other service: the time is its own"),
    "leaf_errors": N_("; it calls no other service: the errors are its own"),
    "own_cycle": N_("; its calls lead only back along the path: the change is its own"),
    "inbound": N_(
        "{path}: the calls into {origin} changed first, {onset} ({detail}, from {callers}), "
        "while {origin}'s own answers did not: the trouble is on the way into {origin}"
    ),
    "way_in": N_(
        "{path}: {caller}'s calls to {origin} changed first, {onset} ({detail}), while "
        "{origin}'s own answers did not: the trouble is on the way into {origin}"
    ),
    "way_out": N_(
        "{path}: all of {origin}'s calls changed, {onset} ({detail}; to {calls}), while those "
        "services answer as before: the trouble is on {origin}'s way out"
    ),
    "depth": N_("; the walk stops at its depth limit ({depth} hops): {calls} changed too"),
    "clean": N_("nothing changed in {subject}'s own answers nor in its calls ({calls})"),
    "clean_leaf": N_("nothing changed in {subject}'s own answers (it calls no other service)"),
    "no_subject": N_("no mesh series of workload {subject} in the window"),
    "no_mesh": N_("no mesh series in the window"),
    "no_baseline": N_(
        "too little history before the window to tell whether {subject}'s answers changed"
    ),
    "ignored": N_("; ignored: {what}"),
    "cycle": N_("a call back from {source} to {destination} (a cycle)"),
    "self": N_("{workload} calling itself"),
    "latency": N_("latency"),
    "errors": N_("errors"),
    "detail_latency": N_("p95 {before} ms → {after} ms"),
    "detail_errors": N_("failed share {before} → {after}"),
    "none": N_("none"),
    "missing": N_("series without {label}: {count}"),
    # what the primary cause names: "<title>: slower calls into workload stock"
    "by_own_latency": N_("the latency of workload"),
    "by_own_errors": N_("the errors of workload"),
    "by_in_latency": N_("slower calls into workload"),
    # the callee's own answers did not change: the calls fail between the two, on the
    # connection (a reset, a refused or dropped one: a sidecar's response_code 0)
    "by_in_errors": N_("calls failing on their connection into workload"),
    "by_out_latency": N_("slower calls out of workload"),
    "by_out_errors": N_("calls failing on their connections out of workload"),
    "measure": N_("series of an unknown measure {name}: {count}"),
}


@dataclass
class Walk:
    """Where the walk ended and why (module docstring)."""

    path: list[str]
    #: own | leaf | inbound | way_in | way_out | clean | no_subject | no_mesh
    reason: str
    change: Change | None = None
    #: the calls read at the origin (own), the changed calls (way_out, depth), the callers
    #: whose calls changed (inbound)
    calls: list[str] = field(default_factory=list)
    cut: bool = False
    cycles: list[tuple[str, str]] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return self.path[-1]

    @property
    def found(self) -> bool:
        return self.reason not in {"clean", "no_subject", "no_mesh"}


def walk(graph: CallGraph, subject: str, *, max_depth: int, slack: timedelta) -> Walk:
    """From `subject` (none: the mesh's entries) to the deepest workload whose own
    measures changed (module doc)."""
    if not subject:
        return _from_entries(graph, max_depth=max_depth, slack=slack)
    if not graph.knows(subject):
        return Walk([subject], "no_subject")
    path = [subject]
    cycles: list[tuple[str, str]] = []
    while True:
        here = path[-1]
        own = graph.workloads.get(here, Side())
        calls = [c for c in graph.callees(here) if c != OUTSIDE]
        moved = _moved_calls(graph, here, calls, own, slack)
        cycles += [(here, c) for c, _ in moved if c in path]
        moved = [(c, side) for c, side in moved if c not in path]
        if not moved:
            return _settled(graph, path, own, calls, cycles)
        if len(path) - 1 >= max_depth:
            change = _lead(own if own.changed else moved[0][1], own)
            names = [c for c, _ in moved]
            return Walk(path, "own", change, names, cut=True, cycles=cycles)
        if not graph.workloads.get(moved[0][0], Side()).changed:
            return _on_the_way(graph, path, moved, calls, cycles)
        path.append(moved[0][0])


def _from_entries(graph: CallGraph, *, max_depth: int, slack: timedelta) -> Walk:
    """The walk from where requests come in: the entry whose own answers changed first,
    then the others (the first walk that finds a change; else the first entry's)."""
    entries = graph.entries()
    if not entries:
        return Walk(["?"], "no_mesh")
    onsets = {e: graph.workloads.get(e, Side()).onset for e in entries}
    first = sorted((e for e in entries if onsets[e]), key=lambda e: (onsets[e], e))
    order = [*first, *(e for e in entries if not onsets[e])]
    first_walk = walk(graph, order[0], max_depth=max_depth, slack=slack)
    if first_walk.found:
        return first_walk
    later = (walk(graph, e, max_depth=max_depth, slack=slack) for e in order[1:])
    return next((w for w in later if w.found), first_walk)


def _settled(
    graph: CallGraph,
    path: list[str],
    own: Side,
    calls: list[str],
    cycles: list[tuple[str, str]],
) -> Walk:
    """No call of the last workload explains it: its own change, or (at the subject) the
    calls into it, or nothing."""
    if own.changed:
        back = {d for s, d in cycles if s == path[-1]}
        rest = [c for c in calls if c not in back]
        return Walk(path, "own" if calls else "leaf", _lead(own, own), rest, cycles=cycles)
    if len(path) == 1:
        return _inbound(graph, path, calls, cycles)
    return Walk(path, "clean", calls=calls, cycles=cycles)  # not reached: walked into a change


def _on_the_way(
    graph: CallGraph,
    path: list[str],
    moved: list[tuple[str, Side]],
    calls: list[str],
    cycles: list[tuple[str, str]],
) -> Walk:
    """A call changed while its callee answers as before: on the way into that callee, or
    out of the caller when all its calls changed and none of their callees did."""
    here = path[-1]
    callee, side = moved[0]
    own = graph.workloads.get(here, Side())
    unchanged = [c for c, _ in moved if not graph.workloads.get(c, Side()).changed]
    every = len(moved) == len(calls) == len(unchanged)
    if every and len(moved) >= 2:  # noqa: PLR2004 - one call is the callee's way in
        return Walk(path, "way_out", _lead(side, own), [c for c, _ in moved], cycles=cycles)
    return Walk([*path, callee], "way_in", _lead(side, own), [here], cycles=cycles)


def _moved_calls(
    graph: CallGraph, here: str, calls: Sequence[str], own: Side, slack: timedelta
) -> list[tuple[str, Side]]:
    """The calls of `here` that changed no later than its own answers (+ slack), earliest
    first."""
    found = []
    for callee in calls:
        side = graph.calls.get((here, callee))
        if side is None or side.onset is None:
            continue
        if own.onset is not None and side.onset > own.onset + slack:
            continue  # it changed after its caller did: a consequence, not the cause
        found.append((callee, side))
    failing = _errors_rose(own)
    return sorted(
        found, key=lambda pair: (not (failing and _errors_rose(pair[1])), pair[1].onset, pair[0])
    )


def _errors_rose(side: Side) -> bool:
    return side.errors is not None and side.errors.changed


def _lead(side: Side, own: Side) -> Change:
    """The change a line quotes: its errors when the workload's own errors rose (what the
    walk followed), else its earliest change."""
    if _errors_rose(own) and _errors_rose(side):
        assert side.errors is not None  # _errors_rose
        return side.errors
    return side.changes()[0]


def _inbound(
    graph: CallGraph, path: list[str], calls: list[str], cycles: list[tuple[str, str]]
) -> Walk:
    """The subject's answers and calls did not change: did the calls into it?"""
    subject = path[0]
    moved = sorted(
        (side.onset, caller, side)
        for caller in graph.callers(subject)
        if (side := graph.calls.get((caller, subject))) is not None and side.onset is not None
    )
    if not moved:
        return Walk(path, "clean", calls=calls, cycles=cycles)
    change = moved[0][2].changes()[0]
    return Walk(path, "inbound", change, [caller for _, caller, _ in moved], cycles=cycles)


def mesh_walk_rows(
    rule: MeshWalkRule,
    rows: Sequence[Row],
    window: TimeWindow,
    params: Mapping[str, str],
    language: str,
) -> Evidence:
    """The walk over a check's rows, worded (module docstring)."""
    asked = params.get(rule.subject, "")
    limits = Limits(
        min_ratio=rule.min_latency_ratio,
        min_ms=rule.min_latency_ms,
        min_rise=rule.min_error_rise,
        sustain=rule.sustain,
    )
    graph = _read(rows, window.recent_start, limits)
    found = walk(
        graph, asked, max_depth=rule.max_depth, slack=timedelta(seconds=rule.slack_seconds)
    )
    ignored = _ignored(graph, found, language)
    if found.reason in {"no_subject", "no_mesh"}:
        return inconclusive(_word(found.reason, language, subject=asked) + ignored)
    subject = found.path[0]
    if not found.found and _unjudged(graph, subject):
        # nothing to compare with (the mesh's series began inside the baseline): unknown,
        # never "nothing changed" while an alert fires on it
        return inconclusive(_word("no_baseline", language, subject=subject) + ignored)
    if not found.found:
        none = _word("none", language)
        key = "clean" if found.calls else "clean_leaf"
        text = _word(key, language, subject=subject, calls=", ".join(found.calls) or none)
        data = {"path": found.path, "subject": subject, "origin_reason": found.reason}
        return Evidence(
            confirmed=False,
            confidence=rule.refute_confidence,
            text=text + ignored,
            data=data,
            has_data=True,
        )
    return _confirmed(rule, found, subject, language, ignored)


def _confirmed(
    rule: MeshWalkRule, found: Walk, subject: str, language: str, ignored: str
) -> Evidence:
    change = found.change
    assert change is not None  # every walk that found an origin carries its change
    values = {
        "path": ARROW.join(found.path),
        "origin": found.origin,
        "signal": _word(change.measure, language),
        "onset": f"{change.onset:%H:%M:%S}" if change.onset else "?",
        "detail": _detail(change, language),
        "calls": ", ".join(found.calls) or _word("none", language),
        "callers": ", ".join(found.calls),
        "caller": found.path[-2] if len(found.path) > 1 else "?",
    }
    key = found.reason if found.reason in {"inbound", "way_in", "way_out"} else "own"
    text = _word(key, language, **values)
    if found.cut:
        text += _word("depth", language, depth=rule.max_depth, calls=values["calls"])
    elif found.reason == "own" and not found.calls:
        text += _word("own_cycle", language)
    elif found.reason == "own":
        tail = "own_time" if change.measure == "latency" else "own_errors"
        text += _word(tail, language, calls=values["calls"])
    elif found.reason == "leaf":
        text += _word("leaf" if change.measure == "latency" else "leaf_errors", language)
    onset: datetime | None = change.onset
    data = {
        "series_name": found.origin,
        "by": _word(_named_as(found, change), language),
        "path": found.path,
        "subject": subject,
        "origin_reason": found.reason,
        "signal": change.measure,
        "onset": onset.isoformat() if onset else None,
        "baseline": change.baseline,
        "level": change.level,
    }
    confidence = rule.confidence * (CUT_FACTOR if found.cut else 1.0)
    return Evidence(
        confirmed=True, confidence=confidence, text=text + ignored, data=data, has_data=True
    )


def _unjudged(graph: CallGraph, workload: str) -> bool:
    """The workload's own latency had no baseline to be judged against."""
    own = graph.workloads.get(workload)
    return own is None or own.latency is None


def _named_as(found: Walk, change: Change) -> str:
    """How the primary cause names the origin: the signal and where it is — its own
    latency or errors, the calls into it, or its calls out."""
    where = {"inbound": "in", "way_in": "in", "way_out": "out"}.get(found.reason, "own")
    return f"by_{where}_{'latency' if change.measure == 'latency' else 'errors'}"


def _detail(change: Change, language: str) -> str:
    if change.measure == "latency":
        before, after = fmt(change.baseline), fmt(change.level)
        return _word("detail_latency", language, before=before, after=after)
    before, after = f"{change.baseline * 100:.1f}%", f"{change.level * 100:.1f}%"
    return _word("detail_errors", language, before=before, after=after)


def _ignored(graph: CallGraph, found: Walk, language: str) -> str:
    """What the graph and the walk left out, in one clause (empty when nothing)."""
    parts = []
    for what, name, count in graph.ignored:
        if what == "missing":
            parts.append(_word("missing", language, label=name, count=count))
        elif what == "self":
            parts.append(_word("self", language, workload=name))
        else:
            parts.append(_word("measure", language, name=name, count=count))
    parts += [_word("cycle", language, source=s, destination=d) for s, d in found.cycles]
    return _word("ignored", language, what="; ".join(parts)) if parts else ""


def _word(key: str, language: str, **values: object) -> str:
    return gettext(language, _LINES[key]).format(**values)
