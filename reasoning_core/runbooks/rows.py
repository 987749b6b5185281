"""Tool results as rows: the one input shape verdict rules read.

SQL rows are mappings already. A Prometheus result (``data.result`` of the HTTP
API, a vector or a matrix) becomes one row per sample: ``{"dt", "value"}`` plus
the series' labels. Time values may be datetimes, ISO strings or Unix seconds;
all come out as UTC datetimes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from reasoning_core.runbooks.baseline import Point

Row = Mapping[str, Any]


def as_datetime(value: Any) -> datetime | None:
    """A UTC datetime from a datetime, an ISO string or Unix seconds; None if unreadable."""
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), tz=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace(" ", "T", 1))
        except ValueError:
            return None
        return as_datetime(parsed)
    return None


def as_number(value: Any) -> float | None:
    """A finite float, or None for NULL, NaN, infinities and non-numbers."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def as_count(value: Any) -> int:
    """A whole count, 0 for NULL and non-numbers (a session query's count columns)."""
    return int(as_number(value) or 0)


def points(rows: Iterable[Row], *, time_column: str, column: str) -> list[Point]:
    """(time, value) of every row where both are readable, sorted by time."""
    out = []
    for row in rows:
        at, value = as_datetime(row.get(time_column)), as_number(row.get(column))
        if at is not None and value is not None:
            out.append((at, value))
    return sorted(out)


def index_points(
    rows: Sequence[Row],
    *,
    time_column: str,
    columns: Sequence[str],
    reference: tuple[datetime, datetime] | None = None,
) -> list[Point]:
    """One series from several columns: each divided by its mean, then averaged.

    Voice (Erlang) and data (GB) cannot be added; as indices (1.0 = the column's
    usual level over `reference`, else all rows) they can.
    """
    if len(columns) == 1:
        return points(rows, time_column=time_column, column=columns[0])
    means: dict[str, float] = {}
    for column in columns:
        series = points(rows, time_column=time_column, column=column)
        usual = [v for at, v in series if reference is None or reference[0] <= at < reference[1]]
        mean = sum(usual) / len(usual) if usual else 0.0
        if mean <= 0:
            return []
        means[column] = mean
    out = []
    for row in rows:
        at = as_datetime(row.get(time_column))
        values = [as_number(row.get(column)) for column in columns]
        if at is None or any(v is None for v in values):
            continue
        out.append(
            (
                at,
                sum(v / means[c] for v, c in zip(values, columns, strict=True) if v is not None)
                / len(columns),
            )
        )
    return sorted(out)


def group_rows(rows: Iterable[Row], column: str) -> dict[str, list[Row]]:
    """Rows split by the text of one column (rows without it are dropped)."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        key = row.get(column)
        if key is not None:
            groups.setdefault(str(key), []).append(row)
    return groups


def prometheus_rows(result: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Flatten a Prometheus vector/matrix result into rows of dt, value and labels.

    Accepts the HTTP API's series (``{"metric", "values": [[t, v], ...]}`` or
    ``{"metric", "value": [t, v]}``) and the prometheus tool's instant rows
    (``{"metric", "ts", "value"}``).
    """
    out: list[dict[str, Any]] = []
    for series in result:
        labels = dict(series.get("metric") or {})
        for stamp, raw in _samples(series):
            out.append({**labels, "dt": as_datetime(stamp), "value": as_number(raw)})
    return out


def _samples(series: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    if series.get("values"):
        return [(stamp, raw) for stamp, raw in series["values"]]
    value = series.get("value")
    if isinstance(value, list | tuple) and len(value) == 2:  # noqa: PLR2004
        return [(value[0], value[1])]
    if "ts" in series:
        return [(series["ts"], value)]
    return []
