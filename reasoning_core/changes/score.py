"""A robust change score of one series: the incident window against the baseline before it.

The baseline's median and MAD (scaled to a standard deviation, with a floor so a flat
baseline does not turn any wobble into an infinite score) give each incident sample a
robust z. The series changed when `SUSTAINED` consecutive incident samples lie past
`threshold` on the same side; the onset is the first of them, the direction its side, the
strength the median |z| from the onset on. A series already away from its median in the
baseline's last samples (an earlier incident's lingering effect) has no onset in the window.
NaN and ±Inf are dropped, a gap longer than
`MAX_GAP_STEPS` steps breaks a run (no onset across it), a counter's reset (a drop) leaves
that step out of its rate, and a baseline with fewer than `MIN_BASELINE` samples scores
nothing: no false "changed at" time.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import median
from typing import Literal

Point = tuple[datetime, float]
Direction = Literal["up", "down"]

#: Consecutive samples past the threshold that make a change (one spike is not one).
SUSTAINED = 3
#: Fewer baseline samples than this say nothing about what is normal.
MIN_BASELINE = 8
#: A gap of more than this many sampling steps breaks a run of changed samples.
MAX_GAP_STEPS = 3
#: The noise floor, relative to the baseline's median and absolute.
RELATIVE_FLOOR = 0.05
ABSOLUTE_FLOOR = 1e-6
#: Scores are capped: a flat series that moves is "very changed", not infinitely.
MAX_SCORE = 100.0


@dataclass(frozen=True)
class SeriesChange:
    """How one series changed: onset, direction, strength, and the values around it."""

    onset: datetime
    direction: Direction
    score: float
    before: float
    after: float


def finite(points: Sequence[tuple[datetime, float | None]]) -> list[Point]:
    """The points with a finite value, in time order (NaN, ±Inf and None dropped)."""
    return sorted(
        (at, float(v)) for at, v in points if isinstance(v, int | float) and math.isfinite(v)
    )


def counter_rate(points: Sequence[Point]) -> list[Point]:
    """Per-second increase between consecutive samples; a reset (a drop) leaves its step out."""
    rates: list[Point] = []
    for (t0, v0), (t1, v1) in itertools.pairwise(points):
        seconds = (t1 - t0).total_seconds()
        if seconds > 0 and v1 >= v0:
            rates.append((t1, (v1 - v0) / seconds))
    return rates


def score_change(
    points: Sequence[Point], *, incident_start: datetime, threshold: float
) -> SeriesChange | None:
    """The series' change from `incident_start` on, or None when it did not change clearly."""
    baseline = [v for at, v in points if at < incident_start]
    incident = [(at, v) for at, v in points if at >= incident_start]
    if len(baseline) < MIN_BASELINE or len(incident) < SUSTAINED:
        return None
    centre = median(baseline)
    mad = median(abs(v - centre) for v in baseline)
    scale = max(1.4826 * mad, RELATIVE_FLOOR * abs(centre), ABSOLUTE_FLOOR)
    if any(abs(v - centre) / scale >= threshold for v in baseline[-SUSTAINED:]):
        return None  # already away before the window: it did not change in it
    step = _typical_step([at for at, _ in points])
    run: list[tuple[datetime, float, float]] = []
    for at, value in incident:
        z = (value - centre) / scale
        gap = run and (at - run[-1][0]) > step * MAX_GAP_STEPS
        same_side = run and (z > 0) == (run[-1][2] > 0)
        if abs(z) < threshold or gap or (run and not same_side):
            if len(run) >= SUSTAINED:
                break
            run = []
        if abs(z) >= threshold:
            run.append((at, value, z))
    if len(run) < SUSTAINED:
        return None
    onset = run[0][0]
    after = [v for at, v in incident if at >= onset]
    strength = min(MAX_SCORE, median(abs(z) for _, _, z in run))
    return SeriesChange(
        onset=onset,
        direction="up" if run[0][2] > 0 else "down",
        score=strength,
        before=centre,
        after=median(after),
    )


def _typical_step(times: Sequence[datetime]) -> timedelta:
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times) if b > a]
    return timedelta(seconds=median(gaps) if gaps else 1.0)
