"""Write incident benchmark cases: a small simulated area, one subject cell, one question.

Each case is an area of 3-5 sites (9-15 cells), 28 days hourly, produced by the
physical simulation in `demo.simulation` with the effects of one scenario
(`scenarios.CATALOGUE`, taken in turn), sometimes with random missing rows and
NULL values on top. The question asks about the subject in English or Russian,
with or without "since DATE". Every case depends only on (seed, index), so
cases from a larger `count` extend a smaller set.

Usage: ``python -m benchmarks.incidents.generate --out DIR [--seed 1] [--count 44]``
"""

from __future__ import annotations

import argparse
import random
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from benchmarks.incidents.questions import question
from benchmarks.incidents.scenarios import CATALOGUE, CaseWorld, Scenario
from demo.case_files import write_case_dir
from demo.dataset import DemoDataset, DemoIncident, grid_cells
from demo.render import render
from demo.simulation import CellSpec, Simulation, random_spec

DAYS = 28
LAYOUTS = ((3, 1), (2, 2), (4, 1), (5, 1))  # sites in columns x rows
FIRST_END = date(2025, 1, 6)


def generate_cases(out_dir: Path, *, seed: int, count: int) -> list[Path]:
    """Write `count` case directories under `out_dir`; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        scenario = CATALOGUE[index % len(CATALOGUE)]
        rng = random.Random(f"incident-case:{seed}:{index}")
        paths.append(_write_case(out_dir / f"{index:03d}-{scenario.name}", scenario, rng))
    return paths


def _write_case(path: Path, scenario: Scenario, rng: random.Random) -> Path:
    dated = rng.random() < 0.6  # noqa: PLR2004
    world = _world(rng, scenario, dated=dated)
    sim = world.sim
    notes = [effect(world) for effect in scenario.effects]
    if rng.random() < 0.3:  # noqa: PLR2004
        sim.drop_random(rng.uniform(0.01, 0.04))
        notes.append("random rows missing")
    if rng.random() < 0.2:  # noqa: PLR2004
        sim.blank_random(rng.uniform(0.003, 0.01))
        notes.append("some NULL values")
    start = sim.start + timedelta(hours=world.t0)
    language = rng.choice(("en", "ru"))
    since = start.date() if dated else None
    last_day = (sim.end - timedelta(hours=1)).date()
    weekday_ok = since is not None and 1 <= (last_day - since).days <= 6  # noqa: PLR2004
    text = question(rng, language, world.subject, since, weekday_ok=weekday_ok)
    case: dict[str, str] = {
        "question": text,
        "language": language,
        "expected_primary": scenario.primary,
    }
    if scenario.detail:
        case["expected_detail"] = scenario.detail
    truth = DemoIncident(world.subject, scenario.primary, scenario.detail, start, "; ".join(notes))
    return write_simulated_case(path, sim, case, truth, scenario=scenario.name)


def write_simulated_case(
    path: Path, sim: Simulation, case: dict[str, str], truth: DemoIncident, *, scenario: str
) -> Path:
    """Render the simulation and write the case directory, the ground truth as a comment."""
    dataset = DemoDataset(
        seed=sim.seed,
        start=sim.start,
        days=DAYS,
        cells=sim.cell_rows(),
        hours=render(sim),
        incidents=[truth],
    )
    comment = (
        f"scenario: {scenario}\nsubject: {truth.cellname}\n"
        f"from: {truth.start:%Y-%m-%d %H:%M} UTC\neffects: {truth.note or 'none'}"
    )
    return write_case_dir(path, dataset, case, comment=comment)


def _world(rng: random.Random, scenario: Scenario, *, dated: bool) -> CaseWorld:
    cols, rows = rng.choice(LAYOUTS)
    first_site = rng.randrange(1000, 9000, 10)
    specs, _ = grid_cells(rng, cols, rows, first_site=first_site, volume=rng.uniform(0.4, 1.8))
    index = rng.randrange(len(specs))
    specs[index] = _subject_spec(rng, specs[index], scenario)
    end = case_end(rng, weekend=scenario.weekend)
    sim = Simulation(specs, start=end - timedelta(days=DAYS), days=DAYS, seed=rng.randrange(2**31))
    if scenario.weekend:
        back = 48  # Saturday 00:00
    elif dated:  # in the early hours of the day the question names
        back = rng.randint(2, 6) * 24 - rng.randint(0, 8)
    else:
        back = rng.randint(30, 100)
    return CaseWorld(sim=sim, rng=rng, subject=specs[index].cellname, t0=sim.hours - back)


def _subject_spec(rng: random.Random, spec: CellSpec, scenario: Scenario) -> CellSpec:
    if scenario.shape:
        spec = random_spec(rng, spec.cellname, spec.site, spec.neighbors, shape=scenario.shape)
    if scenario.noisy:
        scale = rng.uniform(0.05, 0.12)
        spec = replace(
            spec,
            cs_peak=spec.cs_peak * scale,
            ps_peak=spec.ps_peak * scale,
            noise=rng.uniform(0.2, 0.3),
        )
    return spec


def case_end(rng: random.Random, *, weekend: bool) -> datetime:
    """Midnight after the last day of data; a Monday when the case is about a weekend."""
    day = FIRST_END + timedelta(days=rng.randint(0, 650))
    if weekend:
        day += timedelta(days=(7 - day.weekday()) % 7)
    return datetime.combine(day, time(0), tzinfo=UTC)


def main(argv: list[str] | None = None) -> None:
    """Command line: write cases and print where."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True, help="directory for the cases")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=2 * len(CATALOGUE))
    args = parser.parse_args(argv)
    paths = generate_cases(args.out, seed=args.seed, count=args.count)
    print(f"wrote {len(paths)} cases to {args.out}")


if __name__ == "__main__":
    main()
