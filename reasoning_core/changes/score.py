"""A robust change score of one series: the incident window against the baseline before it.

The baseline's median and MAD (scaled to a standard deviation, with a floor so a flat
baseline does not turn any wobble into an infinite score) give each incident sample a
robust z, against the whole baseline and against its recent part (a series still settling
when the window opened is not changed by going on). The series changed when `SUSTAINED`
incident samples lie past `threshold` on the same side, in a row but for single dips back
(`MAX_DIPS`: a part that stalls and recovers every few seconds); the onset is the first of
them, the direction its side, the strength the median |z| of the run. Of several such runs,
the one still going on at the window's end is the change (what is changed now), else the
first (`ongoing` False: it ended). A series already away from its median in the baseline's
last samples (an earlier incident's lingering effect) has no onset in the window until it
is back to normal. NaN and ±Inf are dropped, a gap longer than `MAX_GAP_STEPS` steps breaks
a run (no onset across it), a counter's reset (a drop) leaves that step out of its rate,
and a baseline with fewer than `MIN_BASELINE` samples scores nothing: no false "changed at"
time.

A counter born in the incident window — no sample in the baseline while its target was
scraped, then rising to the end (`score_appeared`) — is how Prometheus shows a new kind of
event: the first 500 of a route, a new error class. It scores `APPEARED_SCORE`: a clear
change, below a strong move of a series that was there all along.
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
#: A positive series that falls to this fraction of its baseline or below scores
#: `MAX_SCORE`: on a linear scale a fall to nothing is only 1 / RELATIVE_FLOOR noise floors
#: away, as far as a doubling, yet it is the largest fall there is (a disk's free space gone,
#: a target's traffic stopped).
GONE_FRACTION = 0.1
#: The score of a counter born in the incident window (`score_appeared`).
APPEARED_SCORE = 20.0
#: The noise floor of a gauge that counts (its baseline all whole numbers: processes,
#: sessions, locks): a count moves by one for no reason — one more process running, a
#: zombie reaped a scrape later — so a step of one is never `threshold` floors.
COUNT_FLOOR = 0.5
#: How far from a whole multiple of a counter's unit an increment may be, in units (float
#: rounding of a large total; 559 after 557 is no multiple of 557).
UNIT_TOLERANCE = 1e-4
#: The baseline's recent part (`_references`), as a share of it.
RECENT_SHARE = 1 / 3
#: Samples back within the threshold, in a row, that a run of changed samples bridges.
MAX_DIPS = 1


@dataclass(frozen=True)
class SeriesChange:
    """How one series changed: onset, direction, strength, and the values around it."""

    onset: datetime
    direction: Direction
    score: float
    before: float
    after: float
    #: Born in the window (`score_appeared`): `after` is its rate, `before` 0.
    appeared: bool = False
    #: Still changed at the window's end (else a change that already ended).
    ongoing: bool = True


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


def rate_floor(raw: Sequence[Point]) -> float:
    """The noise floor of a counter's rate: half its unit per sampling step. A counter that
    moves in whole units (a page fault, a 10 ms CPU tick) — every increment a whole multiple
    of the smallest — has one unit more or less in a step as its rounding, not a change: a
    CPU rate of 0.002 s/s at a 5 s step is one tick. A counter whose increments share no
    unit (a busy one's hundreds, a byte count) has no such floor."""
    increments = [v1 - v0 for (_, v0), (_, v1) in itertools.pairwise(raw) if v1 > v0]
    if not increments:
        return ABSOLUTE_FLOOR
    unit = min(increments)
    if any(abs(i / unit - round(i / unit)) > UNIT_TOLERANCE for i in increments):
        return ABSOLUTE_FLOOR
    step = _typical_step([at for at, _ in raw]).total_seconds()
    return max(ABSOLUTE_FLOOR, unit / max(step, 1e-9) / 2)


def score_change(
    points: Sequence[Point],
    *,
    incident_start: datetime,
    threshold: float,
    gauge: bool = False,
    floor: float = ABSOLUTE_FLOOR,
) -> SeriesChange | None:
    """The series' change from `incident_start` on, or None when it did not change clearly.

    `floor`: the absolute noise floor (a counter's rate: `rate_floor`). `gauge`: the points
    are a gauge's own values; one that counts (whole numbers all through its baseline) has
    a noise floor of `COUNT_FLOOR`, and falls to nothing past it. A burst
    on a baseline flat at zero that is over before the window's end (a checkpoint's writes,
    one read) is no change: nothing of it is going on. A sample is past the threshold when
    it is past it against the whole baseline and against its recent part (`_references`):
    a series still settling or drifting when the window opened goes on where it was going,
    and that is not a change."""
    baseline = [v for at, v in points if at < incident_start]
    incident = [(at, v) for at, v in points if at >= incident_start]
    if len(baseline) < MIN_BASELINE or len(incident) < SUSTAINED:
        return None
    counts = gauge and all(v.is_integer() for v in baseline)
    references = _references(baseline, counts=counts, floor=floor)
    whole = references[0]
    if any(abs(whole.z(v)) >= threshold for v in baseline[-SUSTAINED:]):
        # already away before the window: an earlier change going on is not one of the
        # window; once back to normal, a new departure is
        incident = _back_to_normal(incident, whole, threshold=threshold)
        if len(incident) < SUSTAINED:
            return None
    step = _typical_step([at for at, _ in points])
    runs = _runs(incident, references, threshold=threshold, step=step, counts=counts)
    if not runs:
        return None
    # the change still going on at the end (the present) before an earlier one that ended
    last_at = incident[-1][0]
    current = [r for r in runs if last_at - r[-1][0] <= step * MAX_GAP_STEPS]
    if not current and whole.centre == 0 and whole.spread <= ABSOLUTE_FLOOR:
        return None  # a burst from nothing, over: nothing of it goes on
    run = current[-1] if current else runs[0]
    onset = run[0][0]
    after = [v for at, v in incident if at >= onset]
    # the unit floors decide whether it changed; how far it went is read as for any series
    # (a count 1 -> 37 is as strong a change as a rate 0.1 -> 3.7)
    strength = min(MAX_SCORE, median(abs(v - whole.centre) for _, v, _ in run) / whole.spread)
    level = median(v for _, v, _ in run)
    if whole.centre > 0 and 0 <= level <= whole.centre * GONE_FRACTION:
        strength = MAX_SCORE  # all but gone: as far as a series can fall
    return SeriesChange(
        onset=onset,
        direction="up" if run[0][2] > 0 else "down",
        score=strength,
        before=whole.centre,
        after=median(after),
        ongoing=bool(current),
    )


@dataclass(frozen=True)
class _Reference:
    """What is normal by one part of the baseline: its median, its spread (the MAD as a
    standard deviation, with the relative floor) and the scale a z is measured in (the
    spread, at least the series' own noise floor)."""

    centre: float
    spread: float
    scale: float

    def z(self, value: float) -> float:
        """How many of its scales `value` lies from the centre (signed)."""
        return (value - self.centre) / self.scale


def _reference(values: Sequence[float], *, counts: bool, floor: float) -> _Reference:
    centre = median(values)
    mad = median(abs(v - centre) for v in values)
    spread = max(1.4826 * mad, RELATIVE_FLOOR * abs(centre), ABSOLUTE_FLOOR)
    return _Reference(centre, spread, max(spread, COUNT_FLOOR if counts else floor))


def _references(values: Sequence[float], *, counts: bool, floor: float) -> list[_Reference]:
    """What is normal by the whole baseline, and by its last `RECENT_SHARE` (at least
    `MIN_BASELINE` samples): a lab's start-up settling, an earlier incident's slow return,
    a disk filling for an hour all move the whole baseline's median away from where the
    series was just before the window."""
    recent = values[-max(MIN_BASELINE, int(len(values) * RECENT_SHARE)) :]
    whole = _reference(values, counts=counts, floor=floor)
    if len(recent) == len(values):
        return [whole]
    return [whole, _reference(recent, counts=counts, floor=floor)]


def _back_to_normal(
    incident: Sequence[Point], reference: _Reference, *, threshold: float
) -> list[Point]:
    """The incident's samples from the first back within the threshold on."""
    for index, (_, value) in enumerate(incident):
        if abs(reference.z(value)) < threshold:
            return list(incident[index:])
    return []


def _z(value: float, references: Sequence[_Reference], *, threshold: float, counts: bool) -> float:
    """The sample's robust z: the smallest against any reference, 0 when they disagree on
    its side. A count (`counts`) that fell to `GONE_FRACTION` of a reference's level or below
    is past it whatever its floor: one process of one, gone."""
    zs = []
    for ref in references:
        z = ref.z(value)
        if counts and ref.centre > 0 and 0 <= value <= ref.centre * GONE_FRACTION:
            z = min(z, -threshold)
        zs.append(z)
    if all(z > 0 for z in zs):
        return min(zs)
    if all(z < 0 for z in zs):
        return max(zs)
    return 0.0


def score_series(
    points: Sequence[Point],
    *,
    raw: Sequence[Point],
    counter: bool,
    incident_start: datetime,
    threshold: float,
) -> SeriesChange | None:
    """`score_change` of a series with the floors its kind gives it: a counter's rate
    (`points`, of its `raw` samples) the unit of its increments in the baseline, a gauge
    that counts half a unit."""
    # the unit is how the counter moved while normal: one still until the window, then
    # moving a hundred a step, has no unit of a hundred
    normal = [(at, v) for at, v in raw if at < incident_start]
    return score_change(
        points,
        incident_start=incident_start,
        threshold=threshold,
        gauge=not counter,
        floor=rate_floor(normal) if counter else ABSOLUTE_FLOOR,
    )


def _runs(
    incident: Sequence[Point],
    references: Sequence[_Reference],
    *,
    threshold: float,
    step: timedelta,
    counts: bool = False,
) -> list[list[tuple[datetime, float, float]]]:
    """The runs of `SUSTAINED` or more samples past `threshold` on one side. A run bridges
    up to `MAX_DIPS` samples back within the threshold in a row, as long as at least half
    of its samples are past it: a part that stalls 4 s of every 5, or flaps, is changed
    through its brief recoveries. A gap of more than `MAX_GAP_STEPS` steps, a sample past
    the threshold on the other side or one dip too many ends a run."""
    runs: list[list[tuple[datetime, float, float]]] = []
    run: list[tuple[datetime, float, float]] = []
    dips = span = 0
    previous: datetime | None = None

    def close() -> None:
        if len(run) >= SUSTAINED and 2 * len(run) >= span:
            runs.append(run)

    for at, value in incident:
        z = _z(value, references, threshold=threshold, counts=counts)
        past = abs(z) >= threshold
        gap = previous is not None and at - previous > step * MAX_GAP_STEPS
        previous = at
        other_side = past and run and (z > 0) != (run[-1][2] > 0)
        if run and (gap or other_side or (not past and dips >= MAX_DIPS)):
            close()
            run, dips, span = [], 0, 0
        if past:
            run.append((at, value, z))
            span += dips + 1
            dips = 0
        elif run:
            dips += 1
    close()
    return runs


def score_appeared(
    points: Sequence[Point], *, incident_start: datetime, end: datetime, step: timedelta
) -> SeriesChange | None:
    """A counter's raw samples: born in the incident window (none before it), present in
    `SUSTAINED` samples or more up to `end` (within a few steps) and risen from its first
    sample to its last; else None. The caller knows its target was scraped before."""
    if len(points) < SUSTAINED or points[0][0] < incident_start:
        return None
    if end - points[-1][0] > step * MAX_GAP_STEPS:
        return None  # gone again: a blip, not what is going on now
    first, last = points[0], points[-1]
    if last[1] <= first[1]:
        return None
    seconds = (last[0] - first[0]).total_seconds()
    return SeriesChange(
        onset=first[0],
        direction="up",
        score=APPEARED_SCORE,
        before=0.0,
        after=(last[1] - first[1]) / seconds if seconds > 0 else 0.0,
        appeared=True,
    )


def _typical_step(times: Sequence[datetime]) -> timedelta:
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times) if b > a]
    return timedelta(seconds=median(gaps) if gaps else 1.0)
