"""Incident cases whose first plan is incomplete: the first checks hit missing data.

Each case is a technical incident (an outage or uplink interference) that began
four to six days before the end of the data, while the counter that proves it
(availability, or RTWP) stopped being reported for the subject cell during the
last 60-68 hours. The question names no date, so the first plan looks at the
default window (the last 72 hours): the decisive check finds only a handful of
samples and is inconclusive, and the traffic that moved to the neighbours
looks like an "external" cause. Only a second look over a wider window (a
reflection retry) finds the real cause. Same simulation and files as
`benchmarks.incidents.generate`; every case depends only on (seed, index).

Usage: ``python -m benchmarks.incidents.reflection_cases --out DIR [--seed 1] [--count 12]``
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from benchmarks.incidents.generate import DAYS, LAYOUTS, case_end, write_simulated_case
from benchmarks.incidents.questions import question
from demo.case_files import write_case_dir
from demo.dataset import DemoDataset, DemoIncident, grid_cells
from demo.incidents import Detail
from demo.render import render
from demo.simulation import Simulation

DEFAULT_COUNT = 12


@dataclass(frozen=True)
class HardScenario:
    """A technical cause whose proving counter went missing recently."""

    name: str
    detail: Detail
    column: str


HARD: tuple[HardScenario, ...] = (
    HardScenario("outage-availability-unreported", "availability", "cell_availability"),
    HardScenario("interference-rtwp-unreported", "interference", "rtwp"),
)


def generate_reflection_cases(out_dir: Path, *, seed: int, count: int) -> list[Path]:
    """Write `count` hard case directories under `out_dir`; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        scenario = HARD[index % len(HARD)]
        rng = random.Random(f"reflection-case:{seed}:{index}")
        paths.append(_write(out_dir / f"r{index:03d}-{scenario.name}", scenario, rng))
    return paths


def _simulation(rng: random.Random) -> tuple[Simulation, str]:
    cols, rows = rng.choice(LAYOUTS)
    specs, _ = grid_cells(
        rng, cols, rows, first_site=rng.randrange(1000, 9000, 10), volume=rng.uniform(0.6, 1.6)
    )
    subject = specs[rng.randrange(len(specs))].cellname
    end = case_end(rng, weekend=False)
    sim = Simulation(specs, start=end - timedelta(days=DAYS), days=DAYS, seed=rng.randrange(2**31))
    return sim, subject


def _write(path: Path, scenario: HardScenario, rng: random.Random) -> Path:
    sim, subject = _simulation(rng)
    t0 = sim.hours - rng.randint(96, 144)
    if scenario.detail == "availability":
        level = rng.uniform(0.0, 40.0)
        sim.outage(subject, t0, level, spread=5.0, absorb=rng.uniform(0.4, 0.7))
        effect = f"availability ~{level:.0f}%"
    else:
        rise = rng.uniform(12.0, 18.0)
        sim.interference(subject, t0, rise, sensitivity=rng.uniform(0.9, 1.1))
        effect = f"RTWP +{rise:.1f} dB"
    gap = rng.randint(60, 68)
    for t in range(sim.hours - gap, sim.hours):
        sim.blanks.setdefault((subject, t), set()).add(scenario.column)
    language = rng.choice(("en", "ru"))
    start = sim.start + timedelta(hours=t0)
    case = {
        "question": question(rng, language, subject, None),
        "language": language,
        "expected_primary": "technical",
        "expected_detail": scenario.detail,
    }
    note = f"{effect}; {scenario.column} not reported for the last {gap} h"
    truth = DemoIncident(subject, "technical", scenario.detail, start, note)
    return write_simulated_case(path, sim, case, truth, scenario=scenario.name)


def missing_data_case(path: Path, *, seed: int) -> Path:
    """An outage whose cell reports no availability, RTWP or attempts at all (28 days).

    Traffic fell and nobody else gained it, so only the technical checks could
    tell, and they have no data: the analysis cannot establish the cause.
    """
    rng = random.Random(f"missing-data-case:{seed}")
    sim, subject = _simulation(rng)
    t0 = sim.hours - 60
    sim.outage(subject, t0, 10.0, spread=3.0, absorb=0.02)
    for t in range(sim.hours):
        sim.blanks[(subject, t)] = {"cell_availability", "rtwp", "cs_att", "ps_att"}
    start = sim.start + timedelta(hours=t0)
    case = {
        "question": question(rng, "en", subject, None),
        "language": "en",
        "expected_primary": "technical",
        "expected_detail": "availability",
    }
    note = "availability ~10%; availability, RTWP and attempts never reported"
    dataset = DemoDataset(
        seed=sim.seed,
        start=sim.start,
        days=DAYS,
        cells=sim.cell_rows(),
        hours=render(sim),
        incidents=[DemoIncident(subject, "technical", "availability", start, note)],
    )
    return write_case_dir(path, dataset, case, comment=f"subject: {subject}\neffects: {note}")


def main(argv: list[str] | None = None) -> None:
    """Command line: write hard cases and print where."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True, help="directory for the cases")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    args = parser.parse_args(argv)
    paths = generate_reflection_cases(args.out, seed=args.seed, count=args.count)
    print(f"wrote {len(paths)} cases to {args.out}")


if __name__ == "__main__":
    main()
