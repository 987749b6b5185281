"""The shipped cell_traffic_drop runbook against real PostgreSQL demo tables.

Every SQL in the runbook (anchor, options, checks) runs on the ARCHITECTURE.md
demo schema with bound parameters, and the verdicts read the outage right.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reasoning_core.planners.runbook.plan import best_match
from reasoning_core.runbooks import compile_sql, evaluate, load_runbooks, match_runbook
from reasoning_core.runbooks.rows import Row
from reasoning_core.understanding import understand
from reasoning_core.understanding.catalogue import KnownNames

START = datetime(2026, 9, 14, tzinfo=UTC)
HOURS = 28 * 24
END = START + timedelta(hours=HOURS - 1)
OUTAGE = END - timedelta(hours=40)

CELLS = [
    ("10001", "S1", ["10004", "10005", "10006"]),
    ("10002", "S1", ["10004"]),
    ("10003", "S1", []),
    ("10004", "S2", ["10001"]),
    ("10005", "S2", ["10001"]),
    ("10006", "S3", ["10001"]),
]


def hour_rows() -> list[tuple[Any, ...]]:
    rng = random.Random(5)
    rows = []
    for name, _, _ in CELLS:
        for i in range(HOURS):
            at = START + timedelta(hours=i)
            if name == "10003" and i % 50 == 0:
                continue  # a cell with missing hours
            level = (0.3 + 0.7 * math.exp(-(((at.hour - 14) / 5) ** 2))) * (
                0.7 if at.weekday() >= 5 else 1.0
            )
            availability = 40.0 if name == "10001" and at >= OUTAGE else 99.9
            load = 10 * level * availability / 100 * (1 + rng.gauss(0, 0.05))
            rows.append(
                (name, at, availability, int(load * 20), int(load * 50), 0.3 * load, load,
                 -105 + rng.gauss(0, 0.5))
            )  # fmt: skip
    return rows


async def load_demo(conn: Any) -> None:
    await conn.execute("CREATE SCHEMA demo")
    await conn.execute(
        "CREATE TABLE demo.cells (cellname text primary key, site text, neighbors text[])"
    )
    await conn.execute(
        "CREATE TABLE demo.hour_stats (cellname text, dt timestamptz, cell_availability double"
        " precision, cs_att integer, ps_att integer, cs_traffic double precision,"
        " ps_traffic double precision, rtwp double precision)"
    )
    await conn.copy_records_to_table("cells", schema_name="demo", records=CELLS)
    await conn.copy_records_to_table("hour_stats", schema_name="demo", records=hour_rows())


async def test_cell_traffic_drop_runs_on_the_demo_schema(pool: Any) -> None:
    runbooks = load_runbooks()
    [match] = runbooks.match(understand("Почему упал трафик на соте 10001?"))
    runbook = match.runbook
    assert runbook.id == "cell_traffic_drop" and match.params == {"cell": "10001"}
    async with pool.acquire() as conn:
        await load_demo(conn)
        assert runbook.window.anchor is not None
        anchor = await conn.fetchval(runbook.window.anchor.query)
        assert anchor == END
        window = match.window(anchor)
        values = match.values(window, anchor=anchor)
        options_sql = runbook.parameters[0].options_query or ""
        options = await conn.fetch(compile_sql(options_sql).sql)
        assert options[0]["cellname"] == "10001"  # the cell that fell most is suggested first
        evidence = {}
        for check in runbook.checks:
            compiled = compile_sql(check.query or "")
            async with conn.transaction(readonly=True):
                records = await conn.fetch(compiled.sql, *compiled.args(values))
            rows: list[Row] = [dict(r) for r in records]
            evidence[check.id] = evaluate(check.verdict, rows, window, tags=check.tags)
    assert evidence["traffic_drop"].confirmed is True
    assert evidence["availability_drop"].confirmed is True
    assert evidence["availability_drop"].data["detail"] == "availability"
    assert evidence["availability_drop"].confidence > 0.8
    assert evidence["rtwp_rise"].confirmed is False
    assert evidence["area_follows"].confirmed is False
    assert evidence["neighbours_offset"].confirmed is False
    assert evidence["missing_hours"].confirmed is False
    assert (
        evidence["availability_drop"].text
        == "availability 40.0% vs 99.9% baseline (-59.9 pp, 41 h)"
    )


def test_a_chosen_runbook_matches_whatever_the_question_says() -> None:
    """An alert's mapping chooses the runbook: `force` matches it below its `min_score`
    (a question with none of its words), and still reads the question's values."""
    host_disk = load_runbooks().get("host_disk")
    assert host_disk is not None
    request = understand("please investigate")
    assert match_runbook(host_disk, request) is None
    forced = match_runbook(host_disk, request, chosen=True)
    assert forced is not None and forced.runbook.id == "host_disk"
    assert forced.missing == ["instance"]  # the mapping's parameters fill it (planner)


@pytest.mark.parametrize(
    ("question", "runbook"),
    [
        ("some service is getting cpu throttled", "service_saturation"),
        ("у сервиса троттлинг CPU", "service_saturation"),
        ("pod api-1 in namespace shop is cpu throttled", "k8s_cpu_throttling"),
    ],
)
def test_the_kind_a_question_speaks_of_chooses_among_packs(question: str, runbook: str) -> None:
    """The same symptom in two packs: the runbook whose subject the question says comes
    first, so "which service?" is asked for a service, "which pod?" for a pod."""
    assert best_match(load_runbooks(), understand(question)).runbook.id == runbook


def test_a_known_name_chooses_the_runbook_that_takes_it() -> None:
    """ "Why is the API of auth slow?" with auth a known service: the service runbook, which
    takes the service, comes before the HTTP runbook, which would ask for a job."""
    known = KnownNames(names={"service": {"auth": "auth"}}, parents={"service": {}})
    request = understand("why is the API of auth slow?", known)
    match = best_match(load_runbooks(), request)
    assert (match.runbook.id, match.params, match.missing) == (
        "service_error_spike",
        {"service": "auth"},
        [],
    )
