"""Verdict rules: numbers from a tool become `Evidence`, with no code evaluated.

Each rule is a pure function over numbers; `evaluate` reads a check's rows,
applies the rule the runbook declared and returns the evidence. Shared scale:

* a rule confirms when the effect clears its threshold (and, for `change`, the
  data's own variation), refutes otherwise, and is inconclusive (None) when
  there are too few samples, saying why;
* strength grows with the margin over the threshold and with the number of
  samples, from about 0 at the threshold to at most 0.97;
* every evidence line carries the numbers it was decided on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from statistics import median
from typing import Any

from reasoning_core.models import Evidence
from reasoning_core.runbooks import baseline as bl
from reasoning_core.runbooks.baseline import Direction, Pair, Scale
from reasoning_core.runbooks.blockers import (
    blocking_session_rows,
    idle_holder_rows,
    long_holder_rows,
    server_answers_rows,
)
from reasoning_core.runbooks.capacity import capacity_rows
from reasoning_core.runbooks.dependencies import dependency_walk_rows
from reasoning_core.runbooks.evidence_words import aggregate_word, change_unit, evidence_line
from reasoning_core.runbooks.hosts import host_name
from reasoning_core.runbooks.idle_clients import idle_clients_rows
from reasoning_core.runbooks.loglines import log_lines_rows
from reasoning_core.runbooks.meshwalk import mesh_walk_rows
from reasoning_core.runbooks.peers import peer_compare_rows
from reasoning_core.runbooks.rows import (
    Row,
    as_datetime,
    as_number,
    group_rows,
    index_points,
    points,
)
from reasoning_core.runbooks.rules import (
    BlockingSessionRule,
    CapacityRule,
    ChangeRule,
    DependencyWalkRule,
    IdleClientsRule,
    IdleHolderRule,
    LogLinesRule,
    LongHolderRule,
    MeshWalkRule,
    RowsExistRule,
    ScrapeErrorRule,
    ServerAnswersRule,
    SyncStandbyRule,
    ThresholdRule,
    VerdictRule,
)
from reasoning_core.runbooks.scrape_errors import scrape_error_rows
from reasoning_core.runbooks.series import chart_series
from reasoning_core.runbooks.standby import sync_standby_rows
from reasoning_core.runbooks.strength import (
    clip,
    fmt,
    inconclusive,
    pct,
    sample_factor,
    signed_strength,
)
from reasoning_core.runbooks.timewindow import TimeWindow

__all__ = ["change", "evaluate", "rows_exist", "threshold"]


def change(
    pairs: Sequence[Pair],
    *,
    direction: Direction,
    min_change: float,
    scale: Scale = "relative",
    noise: float | None = None,
    z_min: float = 2.5,
    min_samples: int = 12,
    explained_share: float | None = None,
    explains_full: float = 0.6,
    label: str = "value",
    unit: str = "",
    language: str = "en",
) -> Evidence:
    """Did the value move by at least `min_change` in `direction` against its baseline?

    `pairs` are recent samples with their fair expectations (`Baseline.pairs`).
    `noise` is the typical change of a normal stretch as long as this one; a
    change inside `z_min` of it does not count. `explained_share`, when given,
    scales a confirmation by how much of a related drop this change accounts for.
    """
    if len(pairs) < min_samples:
        return inconclusive(
            evidence_line("few_pairs", language, label=label, count=len(pairs), need=min_samples)
        )
    delta = bl.change(pairs, scale)
    if delta is None:
        return inconclusive(evidence_line("zero_baseline", language, label=label))
    moved = bl.directional(delta, direction)
    ratio, sigma = _significance(moved, min_change=min_change, noise=noise, z_min=z_min)
    confirmed = ratio >= 1
    strength = signed_strength(ratio) * sample_factor(len(pairs))
    if confirmed and explained_share is not None:
        strength *= clip(explained_share / explains_full, 0.0, 1.0)
    recent = sum(p.actual for p in pairs) / len(pairs)
    usual = sum(p.expected for p in pairs) / len(pairs)
    hours = bl.span_hours(pairs)
    text = evidence_line(
        "change",
        language,
        label=label,
        recent=f"{fmt(recent)}{unit}",
        usual=f"{fmt(usual)}{unit}",
        delta=_delta(delta, scale, unit, language),
        hours=f"{hours:.0f}",
    )
    if not confirmed and moved >= min_change:
        sigma_text = _delta(sigma, scale, unit, language, signed=False)
        text += evidence_line("within_noise", language, sigma=sigma_text)
    data: dict[str, Any] = dict(
        label=label,
        recent=recent,
        baseline=usual,
        change=delta,
        scale=scale,
        direction=direction,
        min_change=min_change,
        samples=len(pairs),
        hours=hours,
        onset=pairs[0].at.isoformat(),
        noise=noise,
        explained_share=explained_share,
    )
    return Evidence(confirmed=confirmed, confidence=strength, text=text, data=data, has_data=True)


def _significance(
    moved: float, *, min_change: float, noise: float | None, z_min: float
) -> tuple[float, float]:
    """Effect over threshold, capped by effect over `z_min` x noise; and the noise used."""
    floor = min_change / 4  # a flat metric (availability 100%) must not make any blip significant
    sigma = max(noise or 0.0, floor)
    ratio = moved / min_change
    if z_min > 0 and noise is not None:
        ratio = min(ratio, moved / (sigma * z_min))
    return ratio, sigma


def _delta(value: float, scale: Scale, unit: str, language: str, *, signed: bool = True) -> str:
    if scale == "relative":
        return pct(value, signed=signed)
    suffix = change_unit(unit, language) or unit
    return (f"{value:+.1f}" if signed else f"{abs(value):.1f}") + suffix


def threshold(
    values: Sequence[float],
    *,
    op: str,
    limit: float,
    margin: float,
    aggregate: str = "mean",
    min_samples: int = 1,
    label: str = "value",
    unit: str = "",
    language: str = "en",
    as_share: bool = False,
) -> Evidence:
    """Is the aggregate of the values above (or below) the limit, and by how much?
    `as_share`: the values are shares of a whole, printed as percentages."""
    if len(values) < min_samples:
        return inconclusive(
            evidence_line("few_values", language, label=label, count=len(values), need=min_samples)
        )
    level = _aggregate(values, aggregate)
    beyond = level - limit if op == "above" else limit - level
    strength = clip(1 - math.exp(-abs(beyond) / margin), 0.02, 0.97)
    text = evidence_line(
        "threshold",
        language,
        label=label,
        aggregate=aggregate_word(aggregate, language),
        level=_shown(level, unit, as_share),
        limit=_shown(limit, unit, as_share),
        count=len(values),
    )
    data = {"label": label, "value": level, "limit": limit, "op": op, "samples": len(values)}
    data["last"] = values[-1]  # the latest sample: is it still beyond the limit now?
    if as_share:
        data["as_share"] = True
    return Evidence(confirmed=beyond > 0, confidence=strength, text=text, data=data, has_data=True)


def beyond_now(data: Mapping[str, Any]) -> bool:
    """Is a threshold's latest sample (`data["last"]`) still beyond its limit? A window holds
    an earlier incident's tail too; measurements without one count as going on."""
    last, limit = data.get("last"), data.get("limit")
    if not isinstance(last, int | float) or not isinstance(limit, int | float):
        return True
    return last > limit if data.get("op", "above") == "above" else last < limit


def _shown(value: float, unit: str, as_share: bool) -> str:
    return f"{value * 100:.1f}%" if as_share else f"{fmt(value)}{unit}"


def _aggregate(values: Sequence[float], how: str) -> float:
    if how == "max":
        return max(values)
    if how == "min":
        return min(values)
    if how == "last":
        return values[-1]
    if how == "median":
        return float(median(values))
    return sum(values) / len(values)


def rows_exist(
    count: int,
    *,
    min_rows: int = 1,
    confidence: float = 0.8,
    refute_confidence: float = 0.5,
    label: str = "rows",
    language: str = "en",
) -> Evidence:
    """At least `min_rows` rows came back -> confirmed; none -> refuted, more weakly."""
    found = count >= min_rows
    text = evidence_line("rows", language, label=label, count=count, need=min_rows)
    return Evidence(
        confirmed=found,
        confidence=confidence if found else refute_confidence,
        text=text,
        data={"label": label, "rows": count, "min_rows": min_rows},
        has_data=True,
    )


# --- from rows ---------------------------------------------------------------------


def evaluate(
    rule: VerdictRule,
    rows: Sequence[Row],
    window: TimeWindow,
    *,
    tags: Mapping[str, str] | None = None,
    language: str = "en",
    params: Mapping[str, str] | None = None,
) -> Evidence:
    """Apply a declared rule to a check's rows; `tags` are copied into the evidence data.

    The evidence line is worded in `language`; its numbers and verdict do not depend on it.
    `params` are the analysis' parameters (a `dependency_walk` reads its subject there).
    """
    if isinstance(rule, ChangeRule):
        evidence = _change_rows(rule, rows, window, language)
    elif isinstance(rule, ThresholdRule):
        evidence = _threshold_rows(rule, rows, window, language)
    elif isinstance(rule, RowsExistRule):
        evidence = _rows_exist_rows(rule, rows, window, language)
    elif isinstance(rule, DependencyWalkRule):
        evidence = dependency_walk_rows(rule, rows, params or {}, language)
    elif isinstance(rule, MeshWalkRule):
        evidence = mesh_walk_rows(rule, rows, window, params or {}, language)
    elif isinstance(rule, CapacityRule):
        evidence = capacity_rows(rule, rows, window, language)
    elif isinstance(rule, LogLinesRule):
        given = params or {}
        now = datetime.fromisoformat(given["log_now"]) if "log_now" in given else None
        evidence = log_lines_rows(
            rule, rows, window, language, source=given.get("log_source"), now=now
        )
    elif isinstance(rule, SessionRule):
        evidence = _session_rows(rule, rows, language)
    elif isinstance(rule, ScrapeErrorRule):
        evidence = scrape_error_rows(rule, rows, language, job=(params or {}).get("job"))
    else:
        evidence = peer_compare_rows(rule, rows, window, language)
    evidence.data = {**evidence.data, "rule": rule.rule, **(tags or {})}
    return evidence


#: The rules over the `pg_sessions` tool's rows (what the monitored PostgreSQL says now).
SessionRule = (
    BlockingSessionRule
    | IdleHolderRule
    | LongHolderRule
    | ServerAnswersRule
    | SyncStandbyRule
    | IdleClientsRule
)


def _session_rows(rule: SessionRule, rows: Sequence[Row], language: str) -> Evidence:
    if isinstance(rule, BlockingSessionRule):
        return blocking_session_rows(rule, rows, language)
    if isinstance(rule, IdleHolderRule):
        return idle_holder_rows(rule, rows, language)
    if isinstance(rule, LongHolderRule):
        return long_holder_rows(rule, rows, language)
    if isinstance(rule, ServerAnswersRule):
        return server_answers_rows(rule, rows, language)
    if isinstance(rule, IdleClientsRule):
        return idle_clients_rows(rule, rows, language)
    return sync_standby_rows(rule, rows, language)


def _change_rows(
    rule: ChangeRule, rows: Sequence[Row], window: TimeWindow, language: str
) -> Evidence:
    reference = (window.baseline_start, window.baseline_end)
    series = index_points(
        rows, time_column=rule.time_column, columns=rule.value, reference=reference
    )
    base = bl.split(series, start=window.baseline_start, end=window.baseline_end)
    recent = bl.split(series, start=window.recent_start, end=window.recent_end)
    if not base or not recent:
        which = "no_baseline" if not base else "no_recent"
        return inconclusive(evidence_line(which, language, label=rule.label.get(language)))
    baseline = bl.Baseline(base, align=rule.align)
    pairs = baseline.pairs(recent)
    if rule.find_onset and len(pairs) >= rule.min_samples:
        pairs = bl.choose_tail(
            pairs, score=_score(rule.scale, rule.direction), min_samples=rule.min_samples
        )
    share = _explained_share(rule, rows, window, pairs) if rule.explains else None
    evidence = change(
        pairs,
        direction=rule.direction,
        min_change=rule.min_change,
        scale=rule.scale,
        noise=baseline.window_noise(pairs, scale=rule.scale),
        z_min=rule.z_min,
        min_samples=rule.min_samples,
        explained_share=share,
        explains_full=rule.explains_full,
        label=rule.label.get(language),
        unit=rule.unit.get(language),
        language=language,
    )
    return _with_series(evidence, series, window, rule, language)


def _with_series(
    evidence: Evidence,
    series: Sequence[bl.Point],
    window: TimeWindow,
    rule: ChangeRule | ThresholdRule,
    language: str,
) -> Evidence:
    """The evidence carrying the series its rule read (for the report's chart)."""
    kept = chart_series(
        series, window, label=rule.label.get(language), unit=rule.unit.get(language)
    )
    if kept is not None:
        evidence.data = {**evidence.data, "series": kept}
    return evidence


def _score(scale: Scale, direction: Direction) -> Callable[[Sequence[Pair]], float | None]:
    def score(tail: Sequence[Pair]) -> float | None:
        delta = bl.change(tail, scale)
        return None if delta is None else bl.directional(delta, direction) * math.sqrt(len(tail))

    return score


def _explained_share(
    rule: ChangeRule, rows: Sequence[Row], window: TimeWindow, pairs: Sequence[Pair]
) -> float | None:
    """How much of the explained columns' change this value's relative change accounts for."""
    if not pairs:
        return None
    reference = (window.baseline_start, window.baseline_end)
    series = index_points(
        rows, time_column=rule.time_column, columns=rule.explains, reference=reference
    )
    base = bl.split(series, start=window.baseline_start, end=window.baseline_end)
    onset = pairs[0].at
    recent = bl.split(series, start=onset, end=window.recent_end)
    explained = bl.change(bl.Baseline(base, align=rule.align).pairs(recent), "relative")
    own = bl.change(pairs, "relative")
    if explained is None or own is None or bl.directional(explained, rule.direction) <= 0:
        return None  # nothing moved that this change could explain
    return max(
        0.0, bl.directional(own, rule.direction) / bl.directional(explained, rule.direction)
    )


def _in_scope(rows: Sequence[Row], column: str, window: TimeWindow) -> list[Row]:
    timed = [(as_datetime(r.get(column)), r) for r in rows]
    if any(at is None for at, _ in timed):
        return list(rows)  # rows without times (instant results) are all "recent"
    return [
        r for at, r in timed if at is not None and window.recent_start <= at < window.recent_end
    ]


def _threshold_rows(
    rule: ThresholdRule, rows: Sequence[Row], window: TimeWindow, language: str
) -> Evidence:
    if rule.by is None:
        return _threshold_series(rule, rows, window, language)
    groups = {name: part for name, part in group_rows(rows, rule.by).items() if name != ""}
    if not groups:
        return _threshold_series(rule, rows, window, language)
    judged = [
        (name, _threshold_series(rule, part, window, language)) for name, part in groups.items()
    ]

    def beyond(item: tuple[str, Evidence]) -> tuple[bool, float]:
        """Past the limit now first (an earlier incident's tail is in the window too), then
        by how far its aggregate went."""
        data = item[1].data
        if "value" not in data:
            return False, -math.inf
        level, limit = float(data["value"]), float(data["limit"])
        return beyond_now(data), level - limit if rule.op == "above" else limit - level

    name, evidence = max(judged, key=beyond)
    if not evidence.has_data:
        return evidence
    onset = _first_crossing(rule, groups[name], window)
    key = "named_from" if onset is not None else "named"
    called = rule.name_label.get(language) if rule.name_label else rule.by
    shown = host_name(name, groups[name][0]) if rule.names == "host" else name
    evidence.text += evidence_line(
        key, language, by=called, name=shown, onset=onset.strftime("%H:%M") if onset else ""
    )
    evidence.data = {**evidence.data, "by": called, "series_name": shown}
    if onset is not None:
        evidence.data["onset"] = onset.isoformat()
    return evidence


def _first_crossing(
    rule: ThresholdRule, rows: Sequence[Row], window: TimeWindow
) -> datetime | None:
    """When the series first went beyond the limit inside the recent window (UTC), or None."""
    for at, value in sorted(points(rows, time_column=rule.time_column, column=rule.value)):
        if at < window.recent_start or at >= window.recent_end:
            continue
        if (value > rule.limit) if rule.op == "above" else (value < rule.limit):
            return at
    return None


def _threshold_series(
    rule: ThresholdRule, rows: Sequence[Row], window: TimeWindow, language: str
) -> Evidence:
    scoped = _in_scope(rows, rule.time_column, window) if rule.scope == "recent" else list(rows)
    timed: list[bl.Point] = []
    if scoped and all(as_datetime(r.get(rule.time_column)) is not None for r in scoped):
        values = [v for _, v in points(scoped, time_column=rule.time_column, column=rule.value)]
        timed = points(rows, time_column=rule.time_column, column=rule.value)
    else:
        values = [v for v in (as_number(r.get(rule.value)) for r in scoped) if v is not None]
    evidence = threshold(
        values,
        op=rule.op,
        limit=rule.limit,
        margin=rule.margin,
        aggregate=rule.aggregate,
        min_samples=rule.min_samples,
        label=rule.label.get(language),
        unit=rule.unit.get(language),
        language=language,
        as_share=rule.as_share,
    )
    return _with_series(evidence, timed, window, rule, language)


def _rows_exist_rows(
    rule: RowsExistRule, rows: Sequence[Row], window: TimeWindow, language: str
) -> Evidence:
    scoped = _in_scope(rows, rule.time_column, window) if rule.scope == "recent" else list(rows)
    return rows_exist(
        len(scoped),
        min_rows=rule.min_rows,
        confidence=rule.confidence,
        refute_confidence=rule.refute_confidence,
        label=rule.label.get(language),
        language=language,
    )
