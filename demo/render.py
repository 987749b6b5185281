"""Turn a `Simulation` into hourly counters (demo.hour_stats rows).

Per hour: each cell's expected demand (cycles x effects), traffic pulled by
neighbours' changes, what an outage or interference cannot serve (part of it
carried by the neighbours), then counting noise. Demand travels as a `Load`
(attempts and the traffic they bring), so subscribers who move to a neighbour
keep their own call lengths and data use. Noise comes from its own random
stream, so adding an effect does not reshuffle the noise elsewhere.
"""

from __future__ import annotations

import math
import random
from datetime import timedelta
from typing import NamedTuple

from demo.simulation import CellSpec, HourRow, Simulation, expected_demand, lognormal

#: Share of the interference loss that shows as fewer attempts (the rest: drops, throughput).
_ATTEMPT_SHARE = 0.45
#: Share of interference-lost demand that the neighbours pick up.
_INTERFERENCE_ABSORB = 0.3


class Load(NamedTuple):
    """Expected attempts and traffic of one hour."""

    cs_att: float
    ps_att: float
    cs_erl: float
    ps_gb: float

    def scaled(self, factor: float) -> Load:
        return Load(*(v * factor for v in self))

    def plus(self, other: Load) -> Load:
        return Load(*(a + b for a, b in zip(self, other, strict=True)))


_ZERO = Load(0.0, 0.0, 0.0, 0.0)


def render(sim: Simulation) -> list[HourRow]:
    """All rows of the simulation, ordered by cell, then hour; gaps left out."""
    rng = random.Random(f"noise-{sim.seed}")
    specs = {c.cellname: c for c in sim.cells}
    out: dict[str, list[HourRow]] = {name: [] for name in specs}
    for t in range(sim.hours):
        offered = _offered(sim, specs, t)
        spilled = _spill(sim, specs, t, offered)
        for name, spec in specs.items():
            # Rendered even when missing, so gaps do not reshuffle the noise of other rows.
            row = _counters(
                sim, spec, t, own=offered[name], spilled_in=spilled.get(name, _ZERO), rng=rng
            )
            if (name, t) in sim.gaps:
                continue
            blanks = sim.blanks.get((name, t))
            if blanks:
                row = _blank(row, blanks)
            out[name].append(row)
    return [row for name in specs for row in out[name]]


def _offered(sim: Simulation, specs: dict[str, CellSpec], t: int) -> dict[str, Load]:
    """Demand per cell after subscribers moved to neighbours (external changes)."""
    moment = sim.start + timedelta(hours=t)
    load: dict[str, Load] = {}
    for name, spec in specs.items():
        level = expected_demand(spec, moment) * sim.demand[name][t]
        cs, ps = spec.cs_peak * level, spec.ps_peak * level
        load[name] = Load(cs, ps, cs * spec.hold_s / 3600, ps * spec.mb_per_session / 1000)
    for move in sim.moves:
        share = move.share[t]
        if not share:
            continue
        taken = load[move.src].scaled(share)
        load[move.src] = load[move.src].plus(taken.scaled(-1.0))
        for dst, weight in move.weights.items():
            load[dst] = load[dst].plus(taken.scaled(weight * move.absorb))
    return load


def _spill(
    sim: Simulation, specs: dict[str, CellSpec], t: int, offered: dict[str, Load]
) -> dict[str, Load]:
    """Demand a degraded cell cannot serve, as picked up by its neighbours."""
    spilled: dict[str, Load] = {}
    for name, spec in specs.items():
        avail = sim.availability[name][t] / 100
        loss = sim.loss[name][t]
        share = (1 - avail) * sim.absorb[name]
        share += avail * _ATTEMPT_SHARE * loss * _INTERFERENCE_ABSORB
        if share <= 0:
            continue
        weights = {
            n: (2.0 if specs[n].site == spec.site else 1.0) for n in spec.neighbors if n in specs
        }
        total = sum(weights.values())
        for neighbor, weight in weights.items():
            part = offered[name].scaled(share * weight / total)
            spilled[neighbor] = spilled.get(neighbor, _ZERO).plus(part)
    return spilled


def _counters(
    sim: Simulation, spec: CellSpec, t: int, *, own: Load, spilled_in: Load, rng: random.Random
) -> HourRow:
    name = spec.cellname
    avail = sim.availability[name][t]
    loss = sim.loss[name][t]
    attempts = avail / 100 * (1 - _ATTEMPT_SHARE * loss)
    traffic = avail / 100 * (1 - loss)
    served = Load(
        own.cs_att * attempts, own.ps_att * attempts, own.cs_erl * traffic, own.ps_gb * traffic
    ).plus(spilled_in)
    activity = lognormal(rng, spec.noise)
    cs_att = _count(rng, served.cs_att * activity, spec.noise / 2)
    ps_att = _count(rng, served.ps_att * activity, spec.noise / 2)
    cs_traffic = served.cs_erl * _realised(cs_att, served.cs_att) * lognormal(rng, 0.04)
    ps_traffic = served.ps_gb * _realised(ps_att, served.ps_att) * lognormal(rng, 0.06)
    load = min(1.2, own.cs_att / max(1.0, spec.cs_peak))
    rtwp = spec.rtwp_base + 2.0 * load + sim.rise[name][t] + rng.gauss(0.0, 0.5)
    return HourRow(
        cellname=name,
        dt=sim.start + timedelta(hours=t),
        cell_availability=round(avail, 2),
        cs_att=cs_att,
        ps_att=ps_att,
        cs_traffic=round(cs_traffic, 4),
        ps_traffic=round(ps_traffic, 4),
        rtwp=round(rtwp, 1) if avail > 0 else None,
    )


def _realised(count: int, expected: float) -> float:
    """Traffic follows the attempts that really happened."""
    return count / expected if expected > 0 else 0.0


def _blank(row: HourRow, blanks: set[str]) -> HourRow:
    """The row with the named counters set to NULL."""
    return HourRow(
        cellname=row.cellname,
        dt=row.dt,
        cell_availability=None if "cell_availability" in blanks else row.cell_availability,
        cs_att=None if "cs_att" in blanks else row.cs_att,
        ps_att=None if "ps_att" in blanks else row.ps_att,
        cs_traffic=None if "cs_traffic" in blanks else row.cs_traffic,
        ps_traffic=None if "ps_traffic" in blanks else row.ps_traffic,
        rtwp=None if "rtwp" in blanks else row.rtwp,
    )


def _count(rng: random.Random, expected: float, sigma: float) -> int:
    """A Poisson-like count around `expected`, with extra relative noise."""
    mean = max(0.0, expected * lognormal(rng, sigma))
    return max(0, round(mean + rng.gauss(0.0, math.sqrt(mean))))
