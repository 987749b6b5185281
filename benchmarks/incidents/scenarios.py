"""Incident scenarios for benchmark cases: what physically happens around one subject cell.

A scenario is the ground truth (primary cause, detail) plus the effects to
simulate. Effects only change the world (demand, availability, interference,
traffic moving to neighbours, missing rows); nothing here knows how a planner
detects them. Labels follow the physics: when two causes act at once, the one
that costs the subject more traffic is primary (the pairs below keep the larger
effect at least about three times the smaller).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from demo.incidents import Detail, Kind
from demo.simulation import Shape, Simulation


@dataclass
class CaseWorld:
    """The simulated area of one case and its subject cell."""

    sim: Simulation
    rng: random.Random
    subject: str
    t0: int  # hour index the incident starts at

    @property
    def area(self) -> list[str]:
        return [c.cellname for c in self.sim.cells]


Effect = Callable[[CaseWorld], str]


@dataclass(frozen=True)
class Scenario:
    """Ground truth and the effects that produce it."""

    name: str
    primary: Kind
    detail: Detail | None
    effects: tuple[Effect, ...] = ()
    shape: Shape | None = None  # force the subject's daily profile
    noisy: bool = False  # a low-traffic, noisy subject
    weekend: bool = False  # the data ends on a Sunday; the question is about the weekend


def outage(low: float, high: float, *, spread: float = 0.0) -> Effect:
    """Availability of the subject averages low..high percent from t0."""

    def apply(w: CaseWorld) -> str:
        level = w.rng.uniform(low, high)
        w.sim.outage(w.subject, w.t0, level, spread=spread, absorb=w.rng.uniform(0.3, 0.6))
        return f"availability ~{level:.0f}%"

    return apply


def interference(low: float, high: float, *, daytime: bool | None = None) -> Effect:
    """Uplink interference on the subject: RTWP up by low..high dB from t0."""

    def apply(w: CaseWorld) -> str:
        rise = w.rng.uniform(low, high)
        during_day = w.rng.random() < 0.3 if daytime is None else daytime  # noqa: PLR2004
        w.sim.interference(
            w.subject, w.t0, rise, daytime=during_day, sensitivity=w.rng.uniform(0.85, 1.15)
        )
        return f"RTWP +{rise:.1f} dB" + (" (daytime)" if during_day else "")

    return apply


def area_demand(low: float, high: float) -> Effect:
    """Subscribers' demand in the whole area changes to low..high of normal."""

    def apply(w: CaseWorld) -> str:
        factor = w.rng.uniform(low, high)
        ramp = w.rng.choice((1, 4, 12, 24))
        w.sim.demand_change(w.area, w.t0, factor, ramp_h=ramp, jitter=0.04)
        return f"area demand x{factor:.2f}"

    return apply


def cell_demand(low: float, high: float) -> Effect:
    """Demand on the subject alone changes a little (below any reasonable threshold)."""

    def apply(w: CaseWorld) -> str:
        factor = w.rng.uniform(low, high)
        w.sim.demand_change([w.subject], w.t0, factor, ramp_h=6, jitter=0.0)
        return f"subject demand x{factor:.2f}"

    return apply


def external(low: float, high: float, *, targets: int = 1) -> Effect:
    """A neighbour's change pulls low..high of the subject's traffic onto 1-2 neighbours."""

    def apply(w: CaseWorld) -> str:
        share = w.rng.uniform(low, high)
        neighbors = list(w.sim.spec(w.subject).neighbors)
        chosen = w.rng.sample(neighbors, k=min(targets, len(neighbors)))
        weights = {n: w.rng.uniform(0.5, 1.0) for n in chosen}
        w.sim.move_traffic(w.subject, weights, w.t0, share, absorb=w.rng.uniform(0.85, 1.0))
        return f"{share:.0%} moved to {', '.join(chosen)}"

    return apply


def data_gap(low_h: int, high_h: int) -> Effect:
    """A block of the subject's rows missing in the recent days (not an outage)."""

    def apply(w: CaseWorld) -> str:
        length = w.rng.randint(low_h, high_h)
        first = w.sim.hours - w.rng.randint(length + 2, 60)
        w.sim.drop_rows(w.subject, first, first + length)
        return f"{length} h of rows missing"

    return apply


_T: Kind = "technical"
_A: Detail = "availability"
_I: Detail = "interference"

#: The first four cover every primary class; the rest mix the classes and the hard cases.
CATALOGUE: tuple[Scenario, ...] = (
    Scenario("outage-full", _T, _A, (outage(0, 0),)),
    Scenario("demand-area", "demand", None, (area_demand(0.5, 0.75),)),
    Scenario("external-one", "external", None, (external(0.35, 0.6),)),
    Scenario("none-healthy", "none", None),
    Scenario("interference-strong", _T, _I, (interference(12, 20),)),
    Scenario("demand-near-threshold", "demand", None, (area_demand(0.76, 0.82),)),
    Scenario("external-two", "external", None, (external(0.3, 0.5, targets=2),)),
    Scenario("none-weekend-dip", "none", None, shape="business", weekend=True),
    Scenario("outage-flapping", _T, _A, (outage(40, 75, spread=25),)),
    Scenario(
        "two-causes-demand-over-interference",
        "demand",
        None,
        (area_demand(0.5, 0.6), interference(3, 4, daytime=False)),
    ),
    Scenario("external-near-threshold", "external", None, (external(0.2, 0.26),)),
    Scenario("none-tiny-dip", "none", None, (cell_demand(0.96, 0.99),)),
    Scenario("interference-near-threshold", _T, _I, (interference(6, 8, daytime=False),)),
    Scenario("demand-noisy", "demand", None, (area_demand(0.5, 0.65),), noisy=True),
    Scenario(
        "two-causes-external-over-availability",
        "external",
        None,
        (external(0.45, 0.6), outage(93, 97, spread=3)),
    ),
    Scenario("none-noisy", "none", None, noisy=True),
    Scenario("outage-near-threshold", _T, _A, (outage(72, 80, spread=8),)),
    Scenario(
        "two-causes-interference-over-demand",
        _T,
        _I,
        (interference(12, 16, daytime=False), area_demand(0.86, 0.9)),
    ),
    Scenario(
        "two-causes-outage-over-demand",
        _T,
        _A,
        (outage(35, 55, spread=15), area_demand(0.88, 0.92)),
    ),
    Scenario("none-missing-hours", "none", None, (data_gap(6, 20),)),
    Scenario("interference-daytime", _T, _I, (interference(10, 14, daytime=True),)),
    Scenario("outage-noisy", _T, _A, (outage(35, 55, spread=20),), noisy=True),
)
