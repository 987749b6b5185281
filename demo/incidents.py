"""The incidents planted in the demo dataset, and their ground truth.

Subject sites are chosen apart from each other (never adjacent), so one
incident's side effects (neighbours picking up traffic) do not touch another
subject; the demand incident covers a whole area (a site and its adjacent sites).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from demo.simulation import Simulation

Kind = Literal["technical", "demand", "external", "none"]
Detail = Literal["availability", "interference"]

_INCIDENTS = 6  # besides the demand area
_SUBJECTS = 8  # and two healthy cells


@dataclass(frozen=True, slots=True)
class DemoIncident:
    """Ground truth for one subject cell: what really happened, and from when."""

    cellname: str
    kind: Kind
    detail: Detail | None
    start: datetime | None
    note: str = ""


def plant_incidents(
    sim: Simulation, rng: random.Random, positions: dict[str, tuple[int, int]]
) -> list[DemoIncident]:
    """Apply every kind of incident to `sim`; returns the ground truth per subject cell."""
    demand_site, subjects = _place(rng, positions)
    cells = {site: [c.cellname for c in sim.cells if c.site == site] for site in positions}
    pick = {site: rng.choice(cells[site]) for site in [demand_site, *subjects]}
    for site in subjects[4:6]:  # external: the site's busiest cell, so the move stands out
        pick[site] = max(cells[site], key=lambda name: sim.spec(name).ps_peak)
    planters = [_outage, _flapping, _interference, _daytime_interference, _external, _external]
    out = [
        _demand(sim, rng, pick[demand_site], centre=demand_site, positions=positions, cells=cells)
    ]
    out += [plant(sim, rng, pick[site]) for plant, site in zip(planters, subjects, strict=False)]
    out += [DemoIncident(pick[site], "none", None, None, "healthy") for site in subjects[6:]]
    return out


def _place(rng: random.Random, positions: dict[str, tuple[int, int]]) -> tuple[str, list[str]]:
    def dist(a: str, b: str) -> int:
        (ac, ar), (bc, br) = positions[a], positions[b]
        return abs(ac - bc) + abs(ar - br)

    sites = sorted(positions)
    for _ in range(200):
        rng.shuffle(sites)
        interior = [s for s in sites if sum(dist(s, o) == 1 for o in sites) == 4]  # noqa: PLR2004
        centre = (interior or sites)[0]
        chosen: list[str] = []
        for site in sites:
            # Incidents share no neighbour site; healthy subjects only avoid the incidents.
            spacing = 3 if len(chosen) < _INCIDENTS else 2
            if dist(site, centre) >= 3 and all(dist(site, o) >= spacing for o in chosen):  # noqa: PLR2004
                chosen.append(site)
            if len(chosen) == _SUBJECTS:
                return centre, chosen
    raise ValueError("the grid is too small to keep the demo incidents apart")


def _t0(sim: Simulation, rng: random.Random) -> tuple[int, datetime]:
    # In the early hours of one of the last days, so "since <that day>" fits it.
    t0 = sim.hours - rng.randint(2, 4) * 24 + rng.randint(0, 6)
    return t0, sim.start + timedelta(hours=t0)


def _outage(sim: Simulation, rng: random.Random, cell: str) -> DemoIncident:
    t0, start = _t0(sim, rng)
    sim.outage(cell, t0, 0.0, absorb=rng.uniform(0.4, 0.6))
    return DemoIncident(cell, "technical", "availability", start, "the cell is down")


def _flapping(sim: Simulation, rng: random.Random, cell: str) -> DemoIncident:
    t0, start = _t0(sim, rng)
    level = rng.uniform(45, 70)
    sim.outage(cell, t0, level, spread=25.0, absorb=0.4)
    note = f"availability flaps around {level:.0f}%"
    return DemoIncident(cell, "technical", "availability", start, note)


def _interference(sim: Simulation, rng: random.Random, cell: str) -> DemoIncident:
    t0, start = _t0(sim, rng)
    rise = rng.uniform(13, 17)
    sim.interference(cell, t0, rise)
    return DemoIncident(cell, "technical", "interference", start, f"RTWP up ~{rise:.0f} dB")


def _daytime_interference(sim: Simulation, rng: random.Random, cell: str) -> DemoIncident:
    t0, start = _t0(sim, rng)
    rise = rng.uniform(11, 14)
    sim.interference(cell, t0, rise, daytime=True)
    note = f"RTWP up ~{rise:.0f} dB in the daytime"
    return DemoIncident(cell, "technical", "interference", start, note)


def _external(sim: Simulation, rng: random.Random, cell: str) -> DemoIncident:
    t0, start = _t0(sim, rng)
    neighbors = list(sim.spec(cell).neighbors)
    targets = rng.sample(neighbors, k=rng.choice((1, 2)))
    share = rng.uniform(0.4, 0.6)
    sim.move_traffic(cell, dict.fromkeys(targets, 1.0), t0, share)
    note = f"{share:.0%} of its traffic moved to {', '.join(targets)}"
    return DemoIncident(cell, "external", None, start, note)


def _demand(
    sim: Simulation,
    rng: random.Random,
    cell: str,
    *,
    centre: str,
    positions: dict[str, tuple[int, int]],
    cells: dict[str, list[str]],
) -> DemoIncident:
    t0, start = _t0(sim, rng)
    c, r = positions[centre]
    area = [s for s, (sc, sr) in positions.items() if abs(sc - c) + abs(sr - r) <= 1]
    factor = rng.uniform(0.5, 0.65)
    sim.demand_change([n for s in area for n in cells[s]], t0, factor, ramp_h=8)
    note = f"demand around {centre} fell to ~{factor:.0%}"
    return DemoIncident(cell, "demand", None, start, note)
