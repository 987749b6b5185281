"""The `capacity` verdict rule: how much of a disk (or volume) is free, how fast it fills.

Reads two series per name (free bytes and size, rules.CapacityRule), judges the free
share now (`low`) or the time to full at the last hour's rate (`fills`), and words what
an engineer reads at 3 a.m.: "0.4 MiB free of 32 MiB (99% used), full since 02:41 UTC",
"12 MiB free of 32 MiB (63% used), full in about 6 min at 5 MiB/s". A predicted value is
never printed as a share: a linear extrapolation below zero means "full before then",
which the time to full already says.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Evidence
from reasoning_core.runbooks.baseline import Point
from reasoning_core.runbooks.rows import Row, group_rows, points
from reasoning_core.runbooks.rules import CapacityRule
from reasoning_core.runbooks.series import chart_series
from reasoning_core.runbooks.strength import clip, inconclusive
from reasoning_core.runbooks.timewindow import TimeWindow
from reasoning_core.runbooks.units import duration_text, rate_text, share_text, size_text

#: A time to full beyond this reads as "not filling" (a month of a slow trickle is noise).
_HORIZON_S = 30 * 86400.0

_WORDS: dict[str, str] = {
    "level": N_("{free} free of {size} ({used} used)"),
    "full_since": N_("full since {since} UTC"),
    "full_between": N_("full from {since} to {until} UTC"),
    "fills_in": N_("full in {eta} at {rate}"),
    "low_since": N_("under {limit} free since {since} UTC"),
    "steady": N_("not filling"),
    "named": N_("{by} {name}: {text}"),
    "no_data": N_("{label}: no free space and size series in the window"),
}


@dataclass(frozen=True)
class _State:
    """One name's free space at the deciding sample, and how it got there."""

    at: datetime
    free: float
    size: float
    shares: list[Point]
    rate: float | None

    @property
    def share(self) -> float:
        return self.free / self.size


def capacity_rows(
    rule: CapacityRule, rows: Sequence[Row], window: TimeWindow, language: str
) -> Evidence:
    """The evidence of a capacity check: the name furthest gone speaks."""
    groups = group_rows(rows, rule.by) if rule.by else {"": list(rows)}
    judged = [
        (name, state)
        for name, part in groups.items()
        if (state := _state(rule, part, window)) is not None
    ]
    if not judged:
        return inconclusive(_word("no_data", language).format(label=rule.label.get(language)))
    name, state = max(judged, key=lambda item: _beyond(rule, item[1]))
    beyond = _beyond(rule, state)
    facts = _facts(rule, state)
    called = (rule.name_label.get(language) if rule.name_label else rule.by) or ""
    data: dict[str, Any] = {
        "label": rule.label.get(language),
        "value": state.share,
        "limit": rule.limit,
        "op": "below",
        "samples": len(state.shares),
        "capacity": facts,
    }
    if name:
        data.update(by=called, series_name=name)
    if onset := facts.get("full_since") or facts.get("low_since"):
        data["onset"] = onset
    series = chart_series(
        [(at, share * 100) for at, share in state.shares],
        window,
        label=rule.label.get(language),
        unit="%",
    )
    if series is not None:
        data["series"] = series
    return Evidence(
        confirmed=beyond > 0,
        confidence=clip(1 - math.exp(-abs(beyond) / rule.margin), 0.02, 0.97),
        text=capacity_line(data, language),
        data=data,
        has_data=True,
    )


def capacity_line(data: Mapping[str, Any], language: str) -> str:
    """ "disk /data: 0.4 MiB free of 32 MiB (99% used), full since 02:41 UTC" from the
    numbers a capacity check keeps (so a saved answer words it in any language)."""
    facts = data.get("capacity") or {}
    free, size = float(facts.get("free", 0.0)), float(facts.get("size", 0.0))
    text = _word("level", language).format(
        free=size_text(free, language),
        size=size_text(size, language),
        used=share_text(1 - free / size if size > 0 else 1.0),
    )
    text = f"{text}, {_status(facts, language)}"
    if data.get("by") and data.get("series_name"):
        text = _word("named", language).format(by=data["by"], name=data["series_name"], text=text)
    return text


def _status(facts: Mapping[str, Any], language: str) -> str:
    if since := facts.get("full_since"):
        if until := facts.get("full_until"):
            return _word("full_between", language).format(since=_hhmm(since), until=_hhmm(until))
        return _word("full_since", language).format(since=_hhmm(since))
    eta, rate = facts.get("eta_s"), facts.get("rate")
    if isinstance(eta, int | float) and isinstance(rate, int | float):
        return _word("fills_in", language).format(
            eta=duration_text(eta, language), rate=rate_text(rate, language)
        )
    if since := facts.get("low_since"):
        limit = share_text(float(facts.get("limit", 0.0)))
        return _word("low_since", language).format(limit=limit, since=_hhmm(since))
    return _word("steady", language)


def _state(rule: CapacityRule, rows: Sequence[Row], window: TimeWindow) -> _State | None:
    parts = group_rows(rows, rule.part_label)
    free = points(parts.get(rule.free_part, []), time_column=rule.time_column, column=rule.value)
    sizes = dict(
        points(parts.get(rule.size_part, []), time_column=rule.time_column, column=rule.value)
    )
    recent = {
        at: value
        for at, value in free
        if window.recent_start <= at < window.recent_end and sizes.get(at, 0) > 0
    }
    if not recent:
        return None
    shares = [(at, value / sizes[at]) for at, value in sorted(recent.items())]
    at = min(shares, key=lambda p: p[1])[0] if rule.aggregate == "min" else shares[-1][0]
    rates = dict(
        points(parts.get(rule.rate_part, []), time_column=rule.time_column, column=rule.value)
    )
    rate = rates.get(at)
    if rate is None:  # no rate series from the query: fit the free series it returned
        fitted = [(t, v) for t, v in free if at - timedelta(minutes=rule.fit_minutes) <= t <= at]
        rate = _fill_rate(fitted)
    return _State(at=at, free=recent[at], size=sizes[at], shares=shares, rate=rate)


def _fill_rate(series: Sequence[Point]) -> float | None:
    """Bytes per second the free space shrinks at (least squares, as predict_linear fits)."""
    if len(series) < 2:  # noqa: PLR2004
        return None
    start = series[0][0]
    xs = [(at - start).total_seconds() for at, _ in series]
    ys = [value for _, value in series]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return None
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
    return -slope


def _beyond(rule: CapacityRule, state: _State) -> float:
    """How far past the verdict's edge the name is, in free share (> 0: confirmed)."""
    if rule.test == "low":
        return rule.limit - state.share
    if state.share >= rule.watch_below:
        return -state.share
    rate = state.rate or 0.0
    predicted = (state.free - rate * rule.within_hours * 3600) / state.size
    return -predicted


def _facts(rule: CapacityRule, state: _State) -> dict[str, Any]:
    """The numbers the line is worded from (JSON-ready)."""
    facts: dict[str, Any] = {"free": state.free, "size": state.size, "limit": rule.limit}
    full = _run(state, rule.full_share)
    if full is not None:
        facts["full_since"] = full[0].isoformat()
        if full[1] is not None:
            facts["full_until"] = full[1].isoformat()
        return facts
    rate = state.rate
    # a time to full only where the rule watches the fill: a healthy disk's hourly wobble
    # is no "full in about 2 h" beside "none is filling up"
    watched = state.share < rule.watch_below
    if watched and rate is not None and rate > 0 and state.free / rate <= _HORIZON_S:
        facts.update(rate=rate, eta_s=state.free / rate)
    low = _run(state, rule.limit)
    if low is not None:
        facts["low_since"] = low[0].isoformat()
    return facts


def _run(state: _State, under: float) -> tuple[datetime, datetime | None] | None:
    """The stretch around the deciding sample where the free share stayed under `under`:
    its start, and its end if it ended before the window's last sample."""
    if state.share >= under:
        return None
    index = next(i for i, (at, _) in enumerate(state.shares) if at == state.at)
    first = index
    while first > 0 and state.shares[first - 1][1] < under:
        first -= 1
    after = next((at for at, share in state.shares[index:] if share >= under), None)
    return state.shares[first][0], after


def _hhmm(iso: str) -> str:
    return datetime.fromisoformat(iso).strftime("%H:%M")


def _word(key: str, language: str) -> str:
    return gettext(language, _WORDS[key])
