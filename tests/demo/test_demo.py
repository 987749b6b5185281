"""The demo dataset: deterministic, big enough, incidents visible in the numbers, loadable."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from demo.case_files import format_text_array, parse_text_array, read_case_dir
from demo.dataset import DemoDataset, DemoIncident, example_questions, generate_demo
from demo.loader import DemoDataError, LoadStats, load_case_dir, load_demo, write_case_dir
from demo.simulation import HourRow

Rows = dict[str, dict[datetime, HourRow]]


@pytest.fixture(scope="module")
def demo() -> DemoDataset:
    return generate_demo(seed=11)


@pytest.fixture(scope="module")
def by_cell(demo: DemoDataset) -> Rows:
    out: Rows = defaultdict(dict)
    for row in demo.hours:
        out[row.cellname][row.dt] = row
    return out


def _week_over_week(
    rows: dict[datetime, HourRow], start: datetime, value: Callable[[HourRow], float | None]
) -> tuple[float, float]:
    """Sum of `value` since `start`, and over the same hours one week earlier."""
    recent = baseline = 0.0
    for dt, row in rows.items():
        earlier = rows.get(dt - timedelta(days=7))
        now, before = value(row), value(earlier) if earlier else None
        if dt >= start and now is not None and before is not None:
            recent += now
            baseline += before
    return recent, baseline


def _ratio(
    rows: dict[datetime, HourRow], start: datetime, value: Callable[[HourRow], Any]
) -> float:
    recent, baseline = _week_over_week(rows, start, value)
    return recent / baseline


def _traffic(row: HourRow) -> float | None:
    return row.ps_traffic


def _mean(
    rows: dict[datetime, HourRow], start: datetime, value: Callable[[HourRow], Any]
) -> float:
    values = [float(value(r)) for dt, r in rows.items() if dt >= start and value(r) is not None]
    return sum(values) / len(values)


def _subjects(demo: DemoDataset, kind: str, detail: str | None = None) -> list[DemoIncident]:
    found = [
        i for i in demo.incidents if i.kind == kind and (detail is None or i.detail == detail)
    ]
    assert found, f"no {kind}/{detail} incident"
    return found


def test_same_seed_same_rows_and_other_seed_differs() -> None:
    a = generate_demo(seed=5, sites=40, days=14)
    b = generate_demo(seed=5, sites=40, days=14)
    c = generate_demo(seed=6, sites=40, days=14)
    assert a.hours == b.hours
    assert a.cells == b.cells
    assert a.incidents == b.incidents
    assert a.hours != c.hours


def test_sizes_names_and_neighbours(demo: DemoDataset, by_cell: Rows) -> None:
    assert len(demo.cells) >= 50
    assert demo.days == 28
    names = {c.cellname for c in demo.cells}
    assert all(name.isdigit() for name in names)
    for cell in demo.cells:
        assert len(by_cell[cell.cellname]) == 28 * 24
        assert cell.cellname not in cell.neighbors
        assert set(cell.neighbors) <= names
        same_site = {c.cellname for c in demo.cells if c.site == cell.site} - {cell.cellname}
        assert len(same_site) == 2
        assert same_site <= set(cell.neighbors)
        assert len(cell.neighbors) > len(same_site)  # nearby sites too


def test_every_kind_is_recorded_near_the_end(demo: DemoDataset) -> None:
    kinds = {(i.kind, i.detail) for i in demo.incidents}
    assert kinds >= {
        ("technical", "availability"),
        ("technical", "interference"),
        ("demand", None),
        ("external", None),
        ("none", None),
    }
    end = demo.start + timedelta(days=demo.days)
    for incident in demo.incidents:
        if incident.start is not None:
            assert end - timedelta(days=4) <= incident.start < end - timedelta(hours=40)
            assert incident.start.hour <= 6


def test_daily_and_weekly_cycles(demo: DemoDataset, by_cell: Rows) -> None:
    healthy = _subjects(demo, "none")[0].cellname
    rows = list(by_cell[healthy].values())[: 21 * 24]
    night = [r.ps_att for r in rows if r.dt.hour == 4 and r.ps_att is not None]
    evening = [r.ps_att for r in rows if r.dt.hour == 20 and r.ps_att is not None]
    assert sum(night) * 2.5 < sum(evening)
    weekend_ratio = []
    for cell in demo.cells:
        cell_rows = list(by_cell[cell.cellname].values())[: 14 * 24]
        weekday = [r.ps_att or 0 for r in cell_rows if r.dt.weekday() < 5]
        weekend = [r.ps_att or 0 for r in cell_rows if r.dt.weekday() >= 5]
        weekend_ratio.append((sum(weekend) / len(weekend)) / (sum(weekday) / len(weekday)))
    assert min(weekend_ratio) < 0.75  # business areas empty at weekends
    assert max(weekend_ratio) > 0.95  # residential ones do not


def test_availability_incident_signature(demo: DemoDataset, by_cell: Rows) -> None:
    for incident in _subjects(demo, "technical", "availability"):
        assert incident.start is not None
        rows = by_cell[incident.cellname]
        assert _mean(rows, incident.start, lambda r: r.cell_availability) < 80
        assert _ratio(rows, incident.start, _traffic) < 0.8


def test_interference_incident_signature(demo: DemoDataset, by_cell: Rows) -> None:
    for incident in _subjects(demo, "technical", "interference"):
        assert incident.start is not None
        rows = by_cell[incident.cellname]
        before = _mean(rows, incident.start - timedelta(days=7), lambda r: r.rtwp)
        assert _mean(rows, incident.start, lambda r: r.rtwp) > before + 5
        assert _mean(rows, incident.start, lambda r: r.cell_availability) > 99
        assert _ratio(rows, incident.start, _traffic) < 0.8


def test_demand_incident_signature(demo: DemoDataset, by_cell: Rows) -> None:
    incident = _subjects(demo, "demand")[0]
    assert incident.start is not None
    cell = next(c for c in demo.cells if c.cellname == incident.cellname)
    rows = by_cell[cell.cellname]
    assert _ratio(rows, incident.start, lambda r: r.cs_att) < 0.8
    assert _mean(rows, incident.start, lambda r: r.cell_availability) > 99
    for neighbor in cell.neighbors:  # the whole area fell, healthy
        assert _ratio(by_cell[neighbor], incident.start, lambda r: r.ps_att) < 0.88


def test_external_incident_signature(demo: DemoDataset, by_cell: Rows) -> None:
    for incident in _subjects(demo, "external"):
        assert incident.start is not None
        cell = next(c for c in demo.cells if c.cellname == incident.cellname)
        now, before = _week_over_week(by_cell[cell.cellname], incident.start, _traffic)
        assert now < 0.8 * before
        assert _mean(by_cell[cell.cellname], incident.start, lambda r: r.cell_availability) > 99
        gained = baseline = 0.0
        for neighbor in cell.neighbors:
            n_now, n_before = _week_over_week(by_cell[neighbor], incident.start, _traffic)
            gained += n_now - n_before
            baseline += n_before
        lost = before - now
        # About what it lost, within the neighbours' own week-to-week noise (a few percent).
        assert 0.6 * lost < gained < 1.2 * lost + 0.05 * baseline


def test_healthy_cells_hold_steady(demo: DemoDataset, by_cell: Rows) -> None:
    end = demo.start + timedelta(days=demo.days)
    for incident in _subjects(demo, "none"):
        ratio = _ratio(by_cell[incident.cellname], end - timedelta(days=3), _traffic)
        assert 0.85 < ratio < 1.15


def test_example_questions_in_both_languages(demo: DemoDataset) -> None:
    questions = example_questions(demo)
    assert len(questions) == len(demo.incidents)
    for q in questions:
        assert q.en == f"Why did traffic drop on cell {q.cellname}?"
        assert q.ru == f"Почему упал трафик на соте {q.cellname}?"
        if q.kind == "none":
            assert q.en_since is None
        else:
            assert q.en_since is not None
            assert q.ru_since is not None
            assert q.en_since.startswith(q.en[:-1] + " since 2026-")
            assert re.search(r" с \d\d\.\d\d\.2026\?$", q.ru_since)


def test_text_array_literals() -> None:
    assert parse_text_array("{10001,10002}") == ("10001", "10002")
    assert parse_text_array("{}") == ()
    assert parse_text_array('{"a b","c,d",NULL,e}') == ("a b", "c,d", "e")
    assert parse_text_array(format_text_array(["x y", 'q"t', "z"])) == ("x y", 'q"t', "z")
    with pytest.raises(ValueError, match="array literal"):
        parse_text_array("10001,10002")


async def test_full_demo_loads(pool: asyncpg.Pool[Any], demo: DemoDataset) -> None:
    stats = await load_demo(pool, demo)
    assert stats == LoadStats(
        cells=len(demo.cells),
        hour_rows=len(demo.hours),
        first_dt=demo.start,
        last_dt=demo.start + timedelta(days=demo.days, hours=-1),
        elapsed_ms=stats.elapsed_ms,
    )
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM demo.cells") == len(demo.cells)
        assert await conn.fetchval("SELECT count(*) FROM demo.hour_stats") == len(demo.hours)
        neighbors = await conn.fetchval(
            "SELECT neighbors FROM demo.cells WHERE cellname = $1", demo.cells[0].cellname
        )
        assert tuple(neighbors) == demo.cells[0].neighbors
        index = await conn.fetchval(
            "SELECT indexdef FROM pg_indexes"
            " WHERE schemaname = 'demo' AND tablename = 'hour_stats'"
        )
        assert "(cellname, dt)" in index
    # Loading again replaces the schema rather than adding rows.
    await load_demo(pool, demo)
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM demo.hour_stats") == len(demo.hours)


async def test_case_dir_round_trip(
    pool: asyncpg.Pool[Any], tmp_path: Path, demo: DemoDataset
) -> None:
    cells = list(demo.cells[:6])
    names = {c.cellname for c in cells}
    end = demo.start + timedelta(days=3)
    small = [h for h in demo.hours if h.cellname in names and h.dt < end]
    first = small[0]
    hours = [first._replace(rtwp=None, cs_att=None), *small[1:]]
    dataset = DemoDataset(demo.seed, demo.start, 3, cells, hours, ())
    case = write_case_dir(tmp_path / "case", dataset, {"question": "q", "language": "en"})
    assert read_case_dir(case) == (cells, hours)
    stats = await load_case_dir(pool, case)
    assert (stats.cells, stats.hour_rows) == (len(cells), len(hours))
    async with pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT * FROM demo.hour_stats WHERE cellname = $1 AND dt = $2",
            first.cellname,
            first.dt,
        )
    assert row is not None
    assert row["rtwp"] is None
    assert row["cs_att"] is None
    assert row["ps_att"] == first.ps_att
    assert row["cell_availability"] == first.cell_availability


async def test_bad_csv_names_file_and_line(pool: asyncpg.Pool[Any], tmp_path: Path) -> None:
    (tmp_path / "cells.csv").write_text("cellname,site,neighbors\n10001,S1,{10002}\n")
    (tmp_path / "hour_stats.csv").write_text(
        "cellname,dt,cell_availability,cs_att,ps_att,cs_traffic,ps_traffic,rtwp\n"
        "10001,2026-10-01 00:00:00+00,100,1,2,0.1,0.2,-105\n"
        "10001,2026-10-01 01:00:00+00,100,lots,2,0.1,0.2,-105\n"
    )
    with pytest.raises(DemoDataError, match=r"hour_stats\.csv:3: cs_att: 'lots'"):
        await load_case_dir(pool, tmp_path)
    (tmp_path / "cells.csv").write_text("cellname,site\n10001,S1\n")
    with pytest.raises(DemoDataError, match=r"cells\.csv:1: missing column\(s\) neighbors"):
        await load_case_dir(pool, tmp_path)
