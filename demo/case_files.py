"""CSV files of a demo dataset or an incident case (cells.csv, hour_stats.csv).

`cells.csv`: ``cellname,site,neighbors`` with neighbors as a PostgreSQL array
literal (``"{10001,10002}"``). `hour_stats.csv`: ``cellname,dt,
cell_availability,cs_att,ps_att,cs_traffic,ps_traffic,rtwp`` with dt like
``2026-10-01 00:00:00+00``. Empty fields are NULL. A bad file raises
`DemoDataError` naming the file and the line.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import yaml

from demo.simulation import CellRow, HourRow
from reasoning_core.errors import StoreError

CELLS_FILE = "cells.csv"
HOURS_FILE = "hour_stats.csv"
CASE_FILE = "case.yaml"
CELL_COLUMNS = ("cellname", "site", "neighbors")
HOUR_COLUMNS = HourRow._fields

T = TypeVar("T")


class DemoDataError(StoreError):
    """A dataset file is malformed; the message names the file and the line."""


# --- writing -------------------------------------------------------------------------


def write_case_dir(
    path: Path,
    dataset: Any,
    case_yaml: Mapping[str, Any] | None = None,
    *,
    comment: str | None = None,
) -> Path:
    """Write cells.csv, hour_stats.csv and (if given) case.yaml; returns the directory.

    `dataset` is anything with `cells` (CellRow) and `hours` (HourRow), such as a
    `DemoDataset`.
    """
    path.mkdir(parents=True, exist_ok=True)
    with (path / CELLS_FILE).open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(CELL_COLUMNS)
        for cell in dataset.cells:
            writer.writerow([cell.cellname, cell.site, format_text_array(cell.neighbors)])
    with (path / HOURS_FILE).open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(HOUR_COLUMNS)
        for row in dataset.hours:
            writer.writerow([_field(v) for v in row])
    if case_yaml is not None:
        text = yaml.safe_dump(dict(case_yaml), allow_unicode=True, sort_keys=False)
        header = "".join(f"# {line}\n" for line in (comment or "").splitlines())
        (path / CASE_FILE).write_text(header + text, encoding="utf-8")
    return path


def format_text_array(items: Sequence[str]) -> str:
    """A PostgreSQL text[] literal: {a,b,"c d"}."""
    return "{" + ",".join(_quote_element(i) for i in items) + "}"


def _quote_element(item: str) -> str:
    if item and item.upper() != "NULL" and not any(ch in item for ch in ',{}"\\ \t\n'):
        return item
    return '"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _field(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S+00")
    return str(value)


# --- reading -------------------------------------------------------------------------


def read_case_dir(path: Path) -> tuple[list[CellRow], list[HourRow]]:
    """Parse cells.csv and hour_stats.csv of a case or dataset directory."""
    return read_cells_csv(path / CELLS_FILE), read_hour_stats_csv(path / HOURS_FILE)


def read_cells_csv(path: Path) -> list[CellRow]:
    """Rows of demo.cells from a CSV file."""
    return _parse(path, CELL_COLUMNS, _cell)


def read_hour_stats_csv(path: Path) -> list[HourRow]:
    """Rows of demo.hour_stats from a CSV file."""
    return _parse(path, HOUR_COLUMNS, _hour)


def _cell(record: Mapping[str, str]) -> CellRow:
    return CellRow(
        cellname=_required(record, "cellname"),
        site=record.get("site") or "",
        neighbors=parse_text_array(record.get("neighbors") or "{}"),
    )


def _hour(record: Mapping[str, str]) -> HourRow:
    return HourRow(
        cellname=_required(record, "cellname"),
        dt=parse_timestamp(_required(record, "dt")),
        cell_availability=_optional(record, "cell_availability", float),
        cs_att=_optional(record, "cs_att", parse_int),
        ps_att=_optional(record, "ps_att", parse_int),
        cs_traffic=_optional(record, "cs_traffic", float),
        ps_traffic=_optional(record, "ps_traffic", float),
        rtwp=_optional(record, "rtwp", float),
    )


def _parse(path: Path, columns: Sequence[str], build: Callable[[Mapping[str, str]], T]) -> list[T]:
    """Build a row from each data line; an error names the file and the line."""
    try:
        f = path.open(newline="", encoding="utf-8-sig")
    except OSError as e:
        raise DemoDataError(f"{path}: cannot read ({e.strerror or e})") from e
    with f:
        reader = csv.DictReader(f)
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            raise DemoDataError(f"{path}:1: missing column(s) {', '.join(missing)}")
        rows: list[T] = []
        try:
            for record in reader:
                if None in record or any(record.get(c) is None for c in columns):
                    raise ValueError(f"expected {len(reader.fieldnames or [])} fields")
                rows.append(build({k: v.strip() for k, v in record.items() if isinstance(v, str)}))
        except (ValueError, csv.Error) as e:
            raise DemoDataError(f"{path}:{reader.line_num}: {e}") from e
    return rows


def _required(record: Mapping[str, str], column: str) -> str:
    value = record.get(column, "")
    if not value:
        raise ValueError(f"{column} is empty")
    return value


def _optional(record: Mapping[str, str], column: str, parse: Callable[[str], T]) -> T | None:
    value = record.get(column, "")
    if not value:
        return None
    try:
        return parse(value)
    except ValueError:
        raise ValueError(f"{column}: {value!r} is not a number") from None


def parse_int(text: str) -> int:
    """An integer, also when written as 12.0."""
    number = float(text)
    if not number.is_integer():
        raise ValueError(text)
    return int(number)


def parse_timestamp(text: str) -> datetime:
    """`2026-10-01 00:00:00+00` (or any ISO form); no offset means UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"dt: {text!r} is not a timestamp like 2026-10-01 00:00:00+00") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_text_array(text: str) -> tuple[str, ...]:
    """A PostgreSQL text[] literal such as {10001,10002} or {"a b",c}; NULLs dropped."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise ValueError(f"neighbors: {text!r} is not an array literal like {{10001,10002}}")
    items: list[str] = []
    i, body = 0, body[1:-1]
    while i < len(body):
        if body[i] == '"':
            value, i = _quoted(body, i + 1)
            items.append(value)
        else:
            end = body.find(",", i)
            end = len(body) if end < 0 else end
            value = body[i:end].strip()
            if value and value.upper() != "NULL":
                items.append(value)
            i = end
        i += 1  # the comma
    return tuple(items)


def _quoted(body: str, i: int) -> tuple[str, int]:
    out: list[str] = []
    while i < len(body) and body[i] != '"':
        if body[i] == "\\" and i + 1 < len(body):
            i += 1
        out.append(body[i])
        i += 1
    if i >= len(body):
        raise ValueError("neighbors: unterminated quoted element")
    return "".join(out), i + 1
