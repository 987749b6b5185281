"""The incident case generator: every class and hard case written, files parse and load back."""

from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from benchmarks.incidents.case import CaseFormatError, IncidentCase, find_cases, read_case
from benchmarks.incidents.generate import generate_cases, main
from benchmarks.incidents.scenarios import CATALOGUE
from demo.case_files import read_case_dir
from demo.loader import load_case_dir
from demo.simulation import CellRow, HourRow

pytestmark = pytest.mark.slow

Case = tuple[Path, IncidentCase, list[CellRow], list[HourRow]]


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[Case]:
    root = tmp_path_factory.mktemp("cases")
    paths = generate_cases(root, seed=3, count=len(CATALOGUE))
    assert paths == find_cases(root)
    return [(p, read_case(p), *read_case_dir(p)) for p in paths]


def _subject(case: IncidentCase) -> str:
    match = re.search(r"\b\d{5}\b", case.question)
    assert match, case.question
    return match.group(0)


def _recent(hours: list[HourRow], cell: str, days: int = 2) -> list[HourRow]:
    end = max(h.dt for h in hours)
    return [h for h in hours if h.cellname == cell and h.dt > end - timedelta(days=days)]


def test_every_class_and_scenario_is_written(cases: list[Case]) -> None:
    assert [p.name.split("-", 1)[1] for p, *_ in cases] == [s.name for s in CATALOGUE]
    primaries = Counter(case.expected_primary for _, case, *_ in cases)
    assert set(primaries) == {"technical", "demand", "external", "none"}
    assert primaries["none"] >= 4
    details = {
        case.expected_detail for _, case, *_ in cases if case.expected_primary == "technical"
    }
    assert details == {"availability", "interference"}
    assert all(
        case.expected_detail is None
        for _, case, *_ in cases
        if case.expected_primary != "technical"
    )
    assert {case.language for _, case, *_ in cases} == {"en", "ru"}
    questions = [case.question for _, case, *_ in cases]
    assert any(" since " in q for q in questions)
    assert any(" с " in q for q in questions)
    assert any(" since " not in q and " с " not in q for q in questions)


def test_files_parse_back_with_the_contract_shape(cases: list[Case]) -> None:
    for path, case, cells, hours in cases:
        names = {c.cellname for c in cells}
        assert 9 <= len(cells) <= 15, path
        assert _subject(case) in names
        assert all(set(c.neighbors) <= names for c in cells)
        assert {h.cellname for h in hours} == names
        span = max(h.dt for h in hours) - min(h.dt for h in hours)
        assert span == timedelta(days=28, hours=-1)
        assert len(hours) <= len(cells) * 28 * 24
        assert (path / "case.yaml").read_text(encoding="utf-8").startswith("# scenario: ")


def test_hard_cases_have_gaps_and_nulls(cases: list[Case]) -> None:
    short = [p.name for p, _, cells, hours in cases if len(hours) < len(cells) * 28 * 24]
    assert any("missing-hours" in name for name in short)
    assert len(short) >= 3  # random gaps in other cases too
    assert any(
        any(v is None for v in h) for _, _, _, hours in cases for h in hours if h.rtwp is not None
    )


def test_signatures_follow_the_labels(cases: list[Case]) -> None:
    for path, case, _, hours in cases:
        recent = _recent(hours, _subject(case))
        availability = [h.cell_availability for h in recent if h.cell_availability is not None]
        rtwp = [h.rtwp for h in recent if h.rtwp is not None]
        mean_availability = sum(availability) / len(availability)
        if case.expected_detail == "availability":
            assert mean_availability < 85, path
        elif case.expected_detail == "interference":
            assert max(rtwp) > -100, path
            assert mean_availability > 98, path
        elif case.expected_primary == "none":
            assert mean_availability > 98, path
            assert max(rtwp) < -97, path


def test_same_seed_same_files_and_count_extends(tmp_path: Path) -> None:
    a = generate_cases(tmp_path / "a", seed=9, count=2)
    b = generate_cases(tmp_path / "b", seed=9, count=3)
    for left, right in zip(a, b[:2], strict=True):
        for name in ("case.yaml", "cells.csv", "hour_stats.csv"):
            assert (left / name).read_bytes() == (right / name).read_bytes()
    c = generate_cases(tmp_path / "c", seed=10, count=1)
    assert (c[0] / "hour_stats.csv").read_bytes() != (a[0] / "hour_stats.csv").read_bytes()


async def test_a_case_loads_into_the_demo_schema(
    pool: asyncpg.Pool[Any], cases: list[Case]
) -> None:
    path, _, cells, hours = cases[1]
    stats = await load_case_dir(pool, path)
    assert (stats.cells, stats.hour_rows) == (len(cells), len(hours))
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM demo.hour_stats") == len(hours)


def test_incomplete_case_is_reported(tmp_path: Path) -> None:
    (tmp_path / "case.yaml").write_text("question: q\nlanguage: en\nexpected_primary: none\n")
    with pytest.raises(CaseFormatError, match=r"missing cells\.csv"):
        read_case(tmp_path)
    (tmp_path / "cells.csv").write_text("cellname,site,neighbors\n")
    (tmp_path / "hour_stats.csv").write_text("cellname,dt\n")
    (tmp_path / "case.yaml").write_text("question: q\nlanguage: fr\nexpected_primary: none\n")
    with pytest.raises(CaseFormatError, match="language"):
        read_case(tmp_path)


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["--out", str(tmp_path), "--count", "2", "--seed", "4"])
    assert capsys.readouterr().out.strip() == f"wrote 2 cases to {tmp_path}"
    assert len(find_cases(tmp_path)) == 2
