"""The demo telecom dataset: a grid of 3-cell sites with incidents of every kind.

Pure and deterministic: the same seed (and start) gives the same rows. The
ground truth is kept as `DemoIncident`s so `whytree demo` can print example
questions whose right answers are known. Tables: see ARCHITECTURE.md, "Demo
incident data"; loading lives in `demo.loader`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from demo.incidents import DemoIncident, Detail, Kind, plant_incidents
from demo.render import render
from demo.simulation import CellRow, CellSpec, HourRow, Simulation, random_spec

__all__ = [
    "CellRow",
    "DemoDataset",
    "DemoIncident",
    "ExampleQuestion",
    "HourRow",
    "example_questions",
    "generate_demo",
    "grid_cells",
]

#: The default first hour of the demo data (the contract's example date).
DEFAULT_START = datetime(2026, 10, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class DemoDataset:
    """Rows for demo.cells and demo.hour_stats, with the incidents behind them."""

    seed: int
    start: datetime
    days: int
    cells: Sequence[CellRow]
    hours: Sequence[HourRow]
    incidents: Sequence[DemoIncident]


@dataclass(frozen=True, slots=True)
class ExampleQuestion:
    """A question to try, in English and Russian, with its known answer.

    `en`/`ru` ask about the latest data; `en_since`/`ru_since` name the day the
    incident began (None for a healthy cell).
    """

    cellname: str
    kind: Kind
    detail: Detail | None
    en: str
    ru: str
    en_since: str | None = None
    ru_since: str | None = None


def grid_cells(
    rng: random.Random, cols: int, rows: int, *, first_site: int = 1000, volume: float = 1.0
) -> tuple[list[CellSpec], dict[str, tuple[int, int]]]:
    """Sites of three cells on a grid; neighbours: the same site, and adjacent sites' cells.

    Returns the cell specs and each site's grid position. Cell names are numeric
    strings: site 1000 has cells 10001, 10002 and 10003.
    """
    positions = {f"S{first_site + r * cols + c}": (c, r) for r in range(rows) for c in range(cols)}
    members = {site: [f"{site[1:]}{sector}" for sector in (1, 2, 3)] for site in positions}
    specs: list[CellSpec] = []
    for site, (c, r) in positions.items():
        near = [
            other
            for other, (oc, orow) in positions.items()
            if other != site and abs(oc - c) + abs(orow - r) == 1
        ]
        for cell in members[site]:
            neighbors = [n for n in members[site] if n != cell]
            # Two of each adjacent site's three cells face this one.
            neighbors += [n for other in near for n in sorted(rng.sample(members[other], 2))]
            specs.append(random_spec(rng, cell, site, neighbors, volume=volume))
    return specs, positions


def generate_demo(
    seed: int = 7, *, sites: int = 40, days: int = 28, start: datetime | None = None
) -> DemoDataset:
    """A dataset of `sites` x 3 cells, hourly for `days` days, with incidents near the end."""
    if sites < 40 or days < 14:  # noqa: PLR2004 - room to keep the incidents apart
        raise ValueError("the demo needs at least 40 sites and 14 days")
    first = start or DEFAULT_START
    rng = random.Random(seed)
    cols = 8
    specs, positions = grid_cells(rng, cols, -(-sites // cols))
    sim = Simulation(specs, start=first, days=days, seed=seed)
    incidents = plant_incidents(sim, rng, positions)
    return DemoDataset(
        seed=seed,
        start=first,
        days=days,
        cells=sim.cell_rows(),
        hours=render(sim),
        incidents=incidents,
    )


def example_questions(dataset: DemoDataset) -> list[ExampleQuestion]:
    """One question per recorded incident (and healthy cell), in English and Russian."""
    out = []
    for incident in dataset.incidents:
        cell = incident.cellname
        en = f"Why did traffic drop on cell {cell}?"
        ru = f"Почему упал трафик на соте {cell}?"
        en_since = ru_since = None
        if incident.start is not None:
            day = incident.start.date()
            en_since = f"Why did traffic drop on cell {cell} since {day.isoformat()}?"
            ru_since = f"Почему упал трафик на соте {cell} с {day:%d.%m.%Y}?"
        out.append(
            ExampleQuestion(cell, incident.kind, incident.detail, en, ru, en_since, ru_since)
        )
    return out
