"""Which series are counters: scored as a rate, not read as a level.

By the metadata's type, else a `_total` name; a series of no known type by how it moved
(a running total never falls and mostly rises).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from datetime import datetime

from reasoning_core.changes.score import SUSTAINED

#: Metadata types that say nothing of how a series moves.
_UNTYPED = frozenset({"", "unknown", "untyped"})


def reads_as_counter(
    name: str,
    raw: Sequence[tuple[datetime, float]],
    types: Mapping[str, str],
    incident_start: datetime,
) -> bool:
    """Is the series scored as a counter's rate? By its type (the metadata's, else a
    `_total` name); a series of no known type (an exporter's "unknown": PostgreSQL's
    `pg_stat_database_active_time`) by how it moved: never falling through its baseline and
    rising in at least half its steps is a running total, whose level only grows — read
    as a gauge it is "up" from the first sample of the window on."""
    family = name.removesuffix("_total")
    if (types.get(name) or types.get(family) or "") not in _UNTYPED or name.endswith("_total"):
        return is_counter(name, types)
    baseline = [v for at, v in raw if at < incident_start]
    steps = [b - a for a, b in itertools.pairwise(baseline)]
    return (
        len(steps) >= SUSTAINED
        and all(d >= 0 for d in steps)
        and (2 * sum(1 for d in steps if d > 0) >= len(steps))
    )


def is_counter(name: str, types: Mapping[str, str] | None = None) -> bool:
    """Is the metric a counter (by the metadata's type, else a `_total` name)?"""
    types = types or {}
    family = name.removesuffix("_total")
    kind = types.get(name) or types.get(family)
    if kind:
        return kind == "counter"
    return name.endswith("_total")
