"""An incident benchmark case on disk: `<case>/case.yaml`, `cells.csv`, `hour_stats.csv`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from demo.case_files import CASE_FILE, CELLS_FILE, HOURS_FILE

Primary = Literal["technical", "demand", "external", "none"]


class IncidentCase(BaseModel):
    """The question of a case and its expected answer."""

    model_config = ConfigDict(extra="forbid")

    question: str
    language: Literal["en", "ru"]
    expected_primary: Primary
    expected_detail: Literal["availability", "interference"] | None = None


class CaseFormatError(ValueError):
    """A case directory is incomplete or its case.yaml is invalid."""


def read_case(path: Path) -> IncidentCase:
    """Parse `<path>/case.yaml`, checking the CSV files are there too."""
    for name in (CASE_FILE, CELLS_FILE, HOURS_FILE):
        if not (path / name).is_file():
            raise CaseFormatError(f"{path}: missing {name}")
    try:
        data = yaml.safe_load((path / CASE_FILE).read_text(encoding="utf-8"))
        return IncidentCase.model_validate(data)
    except (yaml.YAMLError, ValidationError) as e:
        raise CaseFormatError(f"{path / CASE_FILE}: {e}") from e


def find_cases(root: Path) -> list[Path]:
    """Case directories under `root` (those holding a case.yaml), sorted by name."""
    return sorted(p.parent for p in root.glob(f"*/{CASE_FILE}"))
