"""Fair baselines: compare each recent sample with the same hour of the week.

Traffic has a daily and a weekly cycle; a Sunday evening compared with a
weekday average reads as an incident. `Baseline` therefore predicts a recent
sample from the median of baseline samples at the same hour of the week (other
weeks), falling back to the same hour of day on the same kind of day (weekday or
weekend) when the baseline has no such hour. Only paired hours are compared, so
missing hours neither count as drops nor dilute a change. `Baseline.noise`
measures how far whole blocks of baseline hours stray from their own
leave-one-day-out prediction: the yardstick that tells a drop from a noisy cell.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from statistics import median
from typing import Literal

Point = tuple[datetime, float]
Align = Literal["hour_of_week", "hour_of_day", "none"]
Scale = Literal["relative", "absolute"]
Direction = Literal["down", "up"]

_WEEKEND = 5  # Saturday and Sunday have weekday() >= 5
_MIN_NOISE_BLOCKS = 3


@dataclass(frozen=True)
class Pair:
    """A recent sample and what the baseline expected at that moment."""

    at: datetime
    actual: float
    expected: float


class Baseline:
    """Expected values for any moment, learnt from the baseline window's samples."""

    def __init__(self, points: Sequence[Point], *, align: Align = "hour_of_week") -> None:
        self.align = align
        self.points = sorted(points)
        self._week: dict[tuple[int, int], list[tuple[date, float]]] = defaultdict(list)
        self._day: dict[tuple[bool, int], list[tuple[date, float]]] = defaultdict(list)
        self._hour: dict[int, list[tuple[date, float]]] = defaultdict(list)
        for at, value in self.points:
            entry = (at.date(), value)
            self._week[(at.weekday(), at.hour)].append(entry)
            self._day[(at.weekday() >= _WEEKEND, at.hour)].append(entry)
            self._hour[at.hour].append(entry)

    def expected(self, at: datetime, *, exclude_day: date | None = None) -> float | None:
        """The baseline's prediction for `at`, or None when it has nothing comparable."""
        if self.align == "none":
            return _median(
                [v for d, v in ((p[0].date(), p[1]) for p in self.points) if d != exclude_day]
            )
        if self.align == "hour_of_week":
            same = _median(
                [v for d, v in self._week.get((at.weekday(), at.hour), ()) if d != exclude_day]
            )
            if same is not None:
                return same
            key = (at.weekday() >= _WEEKEND, at.hour)
            return _median([v for d, v in self._day.get(key, ()) if d != exclude_day])
        return _median([v for d, v in self._hour.get(at.hour, ()) if d != exclude_day])

    def pairs(self, recent: Sequence[Point]) -> list[Pair]:
        """Recent samples with their expectations; samples without one are left out."""
        out = []
        for at, value in sorted(recent):
            expected = self.expected(at)
            if expected is not None:
                out.append(Pair(at, value, expected))
        return out

    def noise(self, *, scale: Scale, block: timedelta) -> float | None:
        """Typical |change| of a `block`-long stretch of normal data (robust), or None."""
        if not self.points or block <= timedelta(0):
            return None
        first = self.points[0][0]
        blocks: dict[int, list[Pair]] = defaultdict(list)
        for at, value in self.points:
            expected = self.expected(at, exclude_day=at.date())
            if expected is not None:
                blocks[int((at - first) / block)].append(Pair(at, value, expected))
        if not blocks:
            return None
        full = max(len(b) for b in blocks.values())
        devs = [change(b, scale) for b in blocks.values() if len(b) * 2 >= full]
        clean = [abs(d) for d in devs if d is not None]
        if len(clean) < _MIN_NOISE_BLOCKS:
            return None
        return 1.4826 * median(clean)  # MAD around zero: past incidents do not inflate it

    def window_noise(self, pairs: Sequence[Pair], *, scale: Scale) -> float | None:
        """`noise` for a stretch as long as `pairs` (daily blocks, shrinking with √days)."""
        hours = max(1.0, span_hours(pairs))
        block = min(24.0, hours)
        sigma = self.noise(scale=scale, block=timedelta(hours=block))
        return None if sigma is None else sigma / math.sqrt(hours / block)


def _median(values: list[float]) -> float | None:
    return median(values) if values else None


def change(pairs: Sequence[Pair], scale: Scale) -> float | None:
    """Relative (sum actual / sum expected - 1) or absolute (mean difference) change."""
    if not pairs:
        return None
    if scale == "absolute":
        return sum(p.actual - p.expected for p in pairs) / len(pairs)
    expected = sum(p.expected for p in pairs)
    if expected <= 0:
        return None
    return sum(p.actual for p in pairs) / expected - 1


def split(points: Sequence[Point], *, start: datetime, end: datetime) -> list[Point]:
    """Points with start <= time < end."""
    return [p for p in points if start <= p[0] < end]


def choose_tail(
    pairs: Sequence[Pair], *, score: Callable[[Sequence[Pair]], float | None], min_samples: int
) -> list[Pair]:
    """The stretch from some onset to the window's end where `score` is largest.

    Incidents run to the end of the window ("since ..."); looking at tails lets a
    one-day outage in a three-day window show at its full depth. About a dozen
    onsets are tried whatever the sampling step, then the best is refined sample
    by sample.
    """
    ordered = sorted(pairs, key=lambda p: p.at)
    if len(ordered) <= min_samples:
        return list(ordered)
    last = len(ordered) - min_samples
    step = max(1, len(ordered) // 12)
    coarse = _best_start(ordered, range(0, last + 1, step), score)
    fine = range(max(0, coarse - step + 1), min(last, coarse + step - 1) + 1)
    return ordered[_best_start(ordered, fine, score, default=coarse) :]


def _best_start(
    ordered: Sequence[Pair],
    starts: Iterable[int],
    score: Callable[[Sequence[Pair]], float | None],
    *,
    default: int = 0,
) -> int:
    best, best_score = default, -math.inf
    for begin in starts:
        value = score(ordered[begin:])
        if value is not None and value > best_score:
            best, best_score = begin, value
    return best


def directional(value: float, direction: Direction) -> float:
    """The change measured in the direction of interest (a drop is positive for 'down')."""
    return -value if direction == "down" else value


def span_hours(pairs: Sequence[Pair]) -> float:
    """Hours covered by the pairs (first to last sample, plus one step)."""
    if len(pairs) < 2:  # noqa: PLR2004
        return float(len(pairs))
    times = sorted(p.at for p in pairs)
    step = min(b - a for a, b in itertools.pairwise(times))
    return ((times[-1] - times[0]) + step) / timedelta(hours=1)
