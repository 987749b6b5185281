"""A small physical simulation of a radio network's hourly counters (stdlib only).

Used by the demo dataset and the incident benchmark generator. It models what
happens, never how anything is detected: subscribers' demand follows daily and
weekly cycles with noise; an area's demand can change; an outage serves only a
share of the hour and the neighbours pick up part of the rest; uplink
interference raises RTWP and loses traffic; a neighbour's change can pull
traffic away from a cell. Everything is deterministic from the seed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, NamedTuple

from demo.profiles import daily_profile

Shape = Literal["residential", "business", "mixed"]
COLUMNS = ("cell_availability", "cs_att", "ps_att", "cs_traffic", "ps_traffic", "rtwp")


class CellRow(NamedTuple):
    """One row of demo.cells."""

    cellname: str
    site: str
    neighbors: tuple[str, ...]


class HourRow(NamedTuple):
    """One row of demo.hour_stats; None is NULL."""

    cellname: str
    dt: datetime
    cell_availability: float | None
    cs_att: int | None
    ps_att: int | None
    cs_traffic: float | None
    ps_traffic: float | None
    rtwp: float | None


@dataclass(frozen=True, slots=True)
class CellSpec:
    """A cell's normal behaviour: volume at the busy hour, cycle shape, noise."""

    cellname: str
    site: str
    neighbors: tuple[str, ...] = ()
    cs_peak: float = 400.0  # CS call attempts in a weekday busy hour
    ps_peak: float = 2000.0  # PS session attempts in a weekday busy hour
    hold_s: float = 90.0  # mean call holding time -> Erlang
    mb_per_session: float = 8.0  # -> GB
    shape: Shape = "mixed"
    weekend: float = 0.9  # weekend demand relative to weekdays
    peak_shift_h: float = 0.0  # this cell's cycle runs a little early or late
    noise: float = 0.06  # relative hour-to-hour noise (sigma of a log-normal)
    rtwp_base: float = -105.0


def random_spec(
    rng: random.Random,
    cellname: str,
    site: str,
    neighbors: Sequence[str] = (),
    *,
    volume: float = 1.0,
    noise: float | None = None,
    shape: Shape | None = None,
) -> CellSpec:
    """A plausible cell with randomised volume, cycle and noise."""
    options: tuple[Shape, ...] = ("residential", "business", "mixed", "mixed")
    chosen: Shape = shape if shape is not None else rng.choice(options)
    weekend = {
        "residential": rng.uniform(1.0, 1.12),
        "business": rng.uniform(0.45, 0.65),
        "mixed": rng.uniform(0.8, 0.95),
    }[chosen]
    return CellSpec(
        cellname=cellname,
        site=site,
        neighbors=tuple(neighbors),
        cs_peak=rng.uniform(150, 900) * volume,
        ps_peak=rng.uniform(800, 4000) * volume,
        hold_s=rng.uniform(60, 120),
        mb_per_session=rng.uniform(4, 15),
        shape=chosen,
        weekend=weekend,
        peak_shift_h=rng.uniform(-1.0, 1.0),
        noise=noise if noise is not None else rng.uniform(0.04, 0.09),
        rtwp_base=rng.uniform(-106.5, -103.5),
    )


@dataclass(slots=True)
class _Move:
    src: str
    weights: dict[str, float]
    share: list[float]  # fraction of src's demand moved, per hour
    absorb: float  # fraction of the moved demand that the destinations carry


@dataclass(slots=True)
class Simulation:
    """Effects are applied to per-hour arrays; `rows()` renders the counters."""

    cells: Sequence[CellSpec]
    start: datetime
    days: int
    seed: int
    rng: random.Random = field(init=False)
    demand: dict[str, list[float]] = field(init=False)
    availability: dict[str, list[float]] = field(init=False)
    rise: dict[str, list[float]] = field(init=False)
    loss: dict[str, list[float]] = field(init=False)
    absorb: dict[str, float] = field(init=False)
    moves: list[_Move] = field(init=False, default_factory=list)
    gaps: set[tuple[str, int]] = field(init=False, default_factory=set)
    blanks: dict[tuple[str, int], set[str]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        names = [c.cellname for c in self.cells]
        self.demand = {n: [1.0] * self.hours for n in names}
        self.availability = {n: [100.0] * self.hours for n in names}
        self.rise = {n: [0.0] * self.hours for n in names}
        self.loss = {n: [0.0] * self.hours for n in names}
        self.absorb = dict.fromkeys(names, 0.4)
        self._background()

    @property
    def hours(self) -> int:
        return self.days * 24

    @property
    def end(self) -> datetime:
        return self.start + timedelta(hours=self.hours)

    def hour_of(self, moment: datetime) -> int:
        """Index of the hour that contains `moment` (clamped to the data)."""
        index = int((moment - self.start).total_seconds() // 3600)
        return min(max(index, 0), self.hours - 1)

    def _ramp(self, t0: int, ramp_h: float) -> list[float]:
        return [
            0.0 if t < t0 else min(1.0, (t - t0 + 1) / max(1.0, ramp_h)) for t in range(self.hours)
        ]

    def _background(self) -> None:
        """Day-to-day variation, slow trends and rare availability blips."""
        rng = self.rng
        common = [rng.gauss(1.0, 0.012) for _ in range(self.days)]
        for spec in self.cells:
            own = [rng.gauss(1.0, 0.02) * common[d] for d in range(self.days)]
            slope = rng.gauss(0.0, 0.03)
            series = self.demand[spec.cellname]
            for t in range(self.hours):
                series[t] *= own[t // 24] * (1 + slope * (t / self.hours - 0.5))
            avail = self.availability[spec.cellname]
            for t in range(self.hours):
                if rng.random() < 0.003:  # noqa: PLR2004 - a short blip now and then
                    avail[t] = round(rng.uniform(92.0, 99.9), 2)

    # --- effects -------------------------------------------------------------------

    def demand_change(
        self,
        cells: Iterable[str],
        t0: int,
        factor: float,
        *,
        ramp_h: float = 6,
        jitter: float = 0.03,
    ) -> None:
        """Subscribers' demand in an area changes by `factor` from hour t0."""
        ramp = self._ramp(t0, ramp_h)
        for name in cells:
            own = max(0.0, factor * (1 + self.rng.gauss(0.0, jitter)))
            series = self.demand[name]
            for t, w in enumerate(ramp):
                series[t] *= 1 - (1 - own) * w

    def outage(
        self,
        cell: str,
        t0: int,
        level: float,
        *,
        spread: float = 0.0,
        absorb: float = 0.4,
        t1: int | None = None,
    ) -> None:
        """Availability averages `level` percent from t0 (to t1); neighbours absorb a share."""
        avail = self.availability[cell]
        for t in range(t0, t1 if t1 is not None else self.hours):
            value = level + (self.rng.gauss(0.0, spread) if spread else 0.0)
            avail[t] = round(min(100.0, max(0.0, value)), 2)
        self.absorb[cell] = absorb

    def interference(
        self,
        cell: str,
        t0: int,
        rise_db: float,
        *,
        daytime: bool = False,
        sensitivity: float = 1.0,
        ramp_h: float = 2,
    ) -> None:
        """Uplink interference raises RTWP by about `rise_db` and costs traffic."""
        ramp = self._ramp(t0, ramp_h)
        for t, w in enumerate(ramp):
            if not w:
                continue
            hour = (self.start + timedelta(hours=t)).hour
            pattern = 1.0 if not daytime else (1.0 if 7 <= hour <= 21 else 0.35)  # noqa: PLR2004
            rise = max(0.0, rise_db * w * pattern * self.rng.gauss(1.0, 0.1))
            self.rise[cell][t] += rise
            self.loss[cell][t] = min(0.9, sensitivity * 0.035 * self.rise[cell][t])

    def move_traffic(
        self,
        src: str,
        dsts: Mapping[str, float],
        t0: int,
        share: float,
        *,
        absorb: float = 0.95,
        ramp_h: float = 3,
    ) -> None:
        """A neighbour's change pulls `share` of src's demand onto `dsts` (weights)."""
        total = sum(dsts.values())
        weights = {d: w / total for d, w in dsts.items()}
        moved = [share * w for w in self._ramp(t0, ramp_h)]
        self.moves.append(_Move(src, weights, moved, absorb))

    def drop_rows(self, cell: str, t0: int, t1: int) -> None:
        """Rows missing from the export for hours t0..t1-1."""
        self.gaps.update((cell, t) for t in range(max(0, t0), min(t1, self.hours)))

    def drop_random(self, fraction: float, cells: Iterable[str] | None = None) -> None:
        """A random `fraction` of rows is missing."""
        for name in cells or [c.cellname for c in self.cells]:
            self.gaps.update((name, t) for t in range(self.hours) if self.rng.random() < fraction)

    def blank_random(self, fraction: float) -> None:
        """A random `fraction` of values is NULL."""
        for spec in self.cells:
            for t in range(self.hours):
                if self.rng.random() < fraction:
                    self.blanks.setdefault((spec.cellname, t), set()).add(self.rng.choice(COLUMNS))

    # --- rendering -----------------------------------------------------------------

    def cell_rows(self) -> list[CellRow]:
        """The rows of demo.cells."""
        return [CellRow(c.cellname, c.site, c.neighbors) for c in self.cells]

    def spec(self, cellname: str) -> CellSpec:
        """The spec of one cell."""
        return next(c for c in self.cells if c.cellname == cellname)


def expected_demand(spec: CellSpec, moment: datetime) -> float:
    """The cell's normal demand multiplier at this hour (1.0 = weekday busy hour)."""
    weekend = moment.weekday() >= 5  # noqa: PLR2004
    level = daily_profile(spec.shape, moment.hour + spec.peak_shift_h, weekend=weekend)
    if weekend:
        level *= spec.weekend
    elif moment.weekday() == 4 and moment.hour >= 17:  # noqa: PLR2004 - Friday evening
        level *= 1.04
    return level


def lognormal(rng: random.Random, sigma: float) -> float:
    """A noise factor with mean 1."""
    return math.exp(rng.gauss(0.0, sigma) - sigma * sigma / 2)
