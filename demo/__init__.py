"""The demo dataset: simulator, incidents and demand profiles, rendering, CSV case files
and the loader into schema `demo` — not persistence of the bot's own data (that is storage/).

`simulation` models a radio network's hourly counters (daily demand shapes in
`profiles`), `incidents` plants incidents with their ground truth, `render` turns a
simulation into rows, `dataset` is the seeded demo dataset with example questions,
`case_files` reads and writes case directories (CSV and case.yaml), `loader` COPYs
rows into schema `demo`, and `setup` is what `whytree demo` runs. The incident
benchmark (benchmarks/incidents) builds its cases from the same pieces.

Submodules import each other, never this package, so the re-exports below make no
import cycle.
"""

from demo.case_files import DemoDataError, read_case_dir, write_case_dir
from demo.dataset import (
    DemoDataset,
    DemoIncident,
    ExampleQuestion,
    example_questions,
    generate_demo,
)
from demo.loader import LoadStats, load_case_dir, load_demo, load_rows
from demo.setup import describe_demo, load_demo_dataset
from demo.simulation import CellRow, HourRow

__all__ = [
    "CellRow",
    "DemoDataError",
    "DemoDataset",
    "DemoIncident",
    "ExampleQuestion",
    "HourRow",
    "LoadStats",
    "describe_demo",
    "example_questions",
    "generate_demo",
    "load_case_dir",
    "load_demo",
    "load_demo_dataset",
    "load_rows",
    "read_case_dir",
    "write_case_dir",
]
