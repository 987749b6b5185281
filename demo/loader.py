"""Load a telecom dataset into the `demo` schema (ARCHITECTURE.md, "Demo incident data").

The schema is dropped and created again in one transaction, rows go in with
COPY (`copy_records_to_table`), and the (cellname, dt) index is built after the
rows are in; the reader role the sql tool runs as gets SELECT on the new tables.
Sources: a generated `DemoDataset`, or a case directory's CSVs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from pydantic import BaseModel

from demo.case_files import DemoDataError, read_case_dir, write_case_dir
from demo.dataset import DemoDataset
from demo.simulation import CellRow, HourRow

__all__ = [
    "DemoDataError",
    "LoadStats",
    "load_case_dir",
    "load_demo",
    "load_rows",
    "write_case_dir",
]

SCHEMA = "demo"

_CREATE = """
DROP SCHEMA IF EXISTS demo CASCADE;
CREATE SCHEMA demo;
CREATE TABLE demo.cells (
    cellname text PRIMARY KEY,
    site text,
    neighbors text[]
);
CREATE TABLE demo.hour_stats (
    cellname text,
    dt timestamptz,
    cell_availability double precision,
    cs_att integer,
    ps_att integer,
    cs_traffic double precision,
    ps_traffic double precision,
    rtwp double precision
);
"""

_INDEX = """
CREATE INDEX hour_stats_cellname_dt_idx ON demo.hour_stats (cellname, dt);
ANALYZE demo.cells;
ANALYZE demo.hour_stats;
"""

# The new schema lost the reader role's grants: give them back where the bot's
# migrations are in (migrations/008_reader_role.sql); elsewhere nothing to do.
_GRANT_READER = """
DO $$
BEGIN
    IF to_regprocedure('whytree_grant_reader(text[])') IS NOT NULL THEN
        PERFORM whytree_grant_reader(ARRAY['demo']);
    END IF;
END
$$;
"""


class LoadStats(BaseModel):
    """What a load put into the demo schema."""

    cells: int
    hour_rows: int
    first_dt: datetime | None = None
    last_dt: datetime | None = None
    elapsed_ms: float = 0.0


async def load_demo(
    target: asyncpg.Pool[Any] | asyncpg.Connection[Any], dataset: DemoDataset
) -> LoadStats:
    """Replace the demo schema with a generated dataset."""
    return await load_rows(target, dataset.cells, dataset.hours)


async def load_case_dir(
    target: asyncpg.Pool[Any] | asyncpg.Connection[Any], path: Path
) -> LoadStats:
    """Replace the demo schema with a case directory's cells.csv and hour_stats.csv.

    Raises `DemoDataError` (naming the file and line) for a malformed file.
    """
    cells, hours = await asyncio.to_thread(read_case_dir, Path(path))
    return await load_rows(target, cells, hours)


async def load_rows(
    target: asyncpg.Pool[Any] | asyncpg.Connection[Any],
    cells: Sequence[CellRow],
    hours: Sequence[HourRow],
) -> LoadStats:
    """Drop and recreate the demo schema with these rows, atomically."""
    if isinstance(target, asyncpg.Pool):
        async with target.acquire() as conn:
            return await _load(conn, cells, hours)
    return await _load(target, cells, hours)


async def _load(
    conn: asyncpg.Connection[Any] | PoolConnectionProxy[Any],
    cells: Sequence[CellRow],
    hours: Sequence[HourRow],
) -> LoadStats:
    started = time.perf_counter()
    try:
        async with conn.transaction():
            await conn.execute(_CREATE)
            await conn.copy_records_to_table(
                "cells", schema_name=SCHEMA, columns=CellRow._fields, records=cells
            )
            await conn.copy_records_to_table(
                "hour_stats", schema_name=SCHEMA, columns=HourRow._fields, records=hours
            )
            await conn.execute(_INDEX)
            await conn.execute(_GRANT_READER)
    except asyncpg.UniqueViolationError as e:
        raise DemoDataError(f"cells: a cellname appears twice ({e.detail or e})") from e
    dts = [h.dt for h in hours]
    return LoadStats(
        cells=len(cells),
        hour_rows=len(hours),
        first_dt=min(dts, default=None),
        last_dt=max(dts, default=None),
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
    )
