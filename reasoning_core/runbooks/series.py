"""The series a check already read, kept small on its evidence so a chart needs no second query.

A change or threshold rule reads a time series from its rows; `chart_series`
keeps at most `MAX_POINTS` of it (bucket means, gaps stay gaps) over the recent
window and a few windows' worth of baseline before it (at most a week), as
JSON-ready data under `Evidence.data["series"]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from reasoning_core.runbooks.baseline import Point
from reasoning_core.runbooks.timewindow import TimeWindow

#: Points kept per series: plenty for a chart a few hundred pixels wide.
MAX_POINTS = 240
#: The chart shows this many recent windows' worth of baseline before the recent window
#: (a two-hour spike over eight hours, not a week), and never more than `MAX_BASELINE`.
BASELINE_WINDOWS = 4
MAX_BASELINE = timedelta(days=7)


def chart_series(
    series: Sequence[Point], window: TimeWindow, *, label: str, unit: str
) -> dict[str, Any] | None:
    """`{"t": [unix seconds], "v": [values], ...}` of the window's points, or None if empty."""
    shown = min(MAX_BASELINE, BASELINE_WINDOWS * (window.recent_end - window.recent_start))
    start = max(window.baseline_start, window.recent_start - shown)
    kept = [(at, v) for at, v in series if start <= at < window.recent_end]
    if not kept:
        return None
    step = max(1, -(-len(kept) // MAX_POINTS))
    times: list[int] = []
    values: list[float] = []
    for i in range(0, len(kept), step):
        bucket = kept[i : i + step]
        times.append(int(bucket[0][0].timestamp()))
        values.append(round(sum(v for _, v in bucket) / len(bucket), 6))
    return {
        "t": times,
        "v": values,
        "label": label,
        "unit": unit,
        "baseline_start": int(start.timestamp()),
        "recent_start": int(window.recent_start.timestamp()),
        "recent_end": int(window.recent_end.timestamp()),
    }
