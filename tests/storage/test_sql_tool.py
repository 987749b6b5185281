"""The sql tool against real PostgreSQL: read-only, bounded, bound parameters, clear errors."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from demo.loader import load_rows
from demo.simulation import CellRow, HourRow
from reasoning_core.errors import ToolError
from reasoning_core.tools import Tool, ToolRequest
from storage.sql_tool import PgSqlTool

START = datetime(2026, 10, 1, tzinfo=UTC)
CELLS = [
    CellRow("10001", "S1000", ("10002", "10003")),
    CellRow("10002", "S1000", ("10001", "10003")),
    CellRow("10003", "S1000", ("10001", "10002")),
]
HOURS = [
    HourRow(c.cellname, START + timedelta(hours=h), 100.0, 10 + h, 20 + h, 0.5, 1.5, -105.0)
    for c in CELLS
    for h in range(20)
]


@pytest.fixture
async def sql(database_url: str) -> AsyncIterator[PgSqlTool]:
    conn = await asyncpg.connect(database_url)
    try:
        await load_rows(conn, CELLS, HOURS)
    finally:
        await conn.close()
    tool = await PgSqlTool.connect(database_url, statement_timeout_ms=2000, max_rows=100)
    yield tool
    await tool.close()


async def _count(tool: PgSqlTool) -> int:
    result = await tool.run(ToolRequest(query="SELECT count(*) AS n FROM demo.hour_stats"))
    assert result.ok, result.error
    return int(result.rows[0]["n"])


async def test_reads_rows_with_positional_and_named_parameters(sql: PgSqlTool) -> None:
    tool: Tool = sql  # the port
    result = await tool.run(
        ToolRequest(
            query="SELECT cellname, dt, cs_att FROM demo.hour_stats"
            " WHERE cellname = $1 AND cs_att >= $2 ORDER BY dt",
            params=["10002", 25],
        )
    )
    assert result.ok
    assert result.tool == "sql"
    assert result.row_count == 5
    assert [r["cs_att"] for r in result.rows] == [25, 26, 27, 28, 29]
    assert result.rows[0]["dt"] == (START + timedelta(hours=15)).isoformat()
    assert result.data["columns"] == ["cellname", "dt", "cs_att"]
    assert not result.truncated
    named = await sql.run(
        ToolRequest(
            query="SELECT neighbors FROM demo.cells WHERE cellname = :cell AND site = :site",
            params={"cell": "10001", "site": "S1000"},
        )
    )
    assert named.rows == [{"neighbors": ["10002", "10003"]}]


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("DELETE FROM demo.hour_stats", "DELETE"),
        ("CREATE TABLE demo.evil (x int)", "CREATE"),
        ("  -- a comment first\n  UPDATE demo.cells SET site = 'x'", "UPDATE"),
    ],
)
async def test_write_statements_are_refused(sql: PgSqlTool, query: str, word: str) -> None:
    result = await sql.run(ToolRequest(query=query))
    assert not result.ok
    assert result.error_kind == "refused"
    assert result.error is not None
    assert word in result.error
    assert "read-only" in result.error
    assert await _count(sql) == len(HOURS)


async def test_a_write_hidden_in_a_cte_is_refused_by_the_read_only_transaction(
    sql: PgSqlTool,
) -> None:
    result = await sql.run(
        ToolRequest(query="WITH d AS (DELETE FROM demo.hour_stats RETURNING 1) SELECT * FROM d")
    )
    assert not result.ok
    assert result.error_kind == "refused"
    assert result.error is not None
    assert "read-only" in result.error
    assert await _count(sql) == len(HOURS)


async def test_a_second_statement_is_refused(sql: PgSqlTool) -> None:
    result = await sql.run(ToolRequest(query="SELECT 1; DELETE FROM demo.hour_stats"))
    assert not result.ok
    assert result.error_kind == "refused"
    assert await _count(sql) == len(HOURS)


async def test_syntax_error_is_a_clear_message(sql: PgSqlTool) -> None:
    result = await sql.run(ToolRequest(query="SELECT cellname FROMM demo.cells"))
    assert not result.ok
    assert result.error_kind == "syntax"
    assert result.error is not None
    assert result.error.startswith("SQL error: syntax error")


async def test_statement_timeout_stops_a_slow_query_quickly(database_url: str) -> None:
    tool = await PgSqlTool.connect(database_url, statement_timeout_ms=200)
    try:
        started = time.perf_counter()
        result = await tool.run(
            ToolRequest(
                query="SELECT count(*) FROM generate_series(1, 100000) a, "
                "generate_series(1, 100000) b"
            )
        )
        elapsed = time.perf_counter() - started
    finally:
        await tool.close()
    assert not result.ok
    assert result.error_kind == "timeout"
    assert result.error == "query timed out after 200 ms (statement_timeout)"
    # Cut: the query counts 10^10 rows (hours of work); a loaded machine still ends it fast.
    assert elapsed < 30


async def test_row_limit_truncates_with_a_note(sql: PgSqlTool) -> None:
    result = await sql.run(
        ToolRequest(query="SELECT * FROM demo.hour_stats ORDER BY cellname, dt", max_rows=7)
    )
    assert result.ok
    assert result.row_count == 7
    assert result.truncated
    assert result.truncation_note == "result cut to the first 7 rows"
    prompt = result.for_prompt(max_chars=400)
    assert len(prompt) < 600
    assert "result cut to the first 7 rows" in prompt
    assert "rows shown to fit the prompt" in prompt
    exact = await sql.run(ToolRequest(query="SELECT * FROM demo.cells", max_rows=3))
    assert exact.row_count == 3
    assert not exact.truncated


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("SELECT * FROM demo.cell_kpis", "data source lacks table demo.cell_kpis"),
        ("SELECT rsrp FROM demo.hour_stats", "data source lacks column rsrp"),
        ("SELECT h.rsrp FROM demo.hour_stats h", "data source lacks column h.rsrp"),
    ],
)
async def test_missing_table_or_column_says_the_data_source_lacks_it(
    sql: PgSqlTool, query: str, message: str
) -> None:
    result = await sql.run(ToolRequest(query=query))
    assert not result.ok
    assert result.error_kind == "missing"
    assert result.error == message


async def test_a_schema_outside_the_data_schemas_is_refused_before_it_runs(
    sql: PgSqlTool, pool: asyncpg.Pool[Any]
) -> None:
    result = await sql.run(ToolRequest(query="SELECT * FROM radio.cells"))
    assert result.error_kind == "refused"
    assert result.error is not None and "radio.cells is outside the data schemas" in result.error
    wider = PgSqlTool(pool, schemas=("demo", "radio"))
    missing = await wider.run(ToolRequest(query="SELECT * FROM radio.cells"))
    assert missing.error_kind == "missing"
    assert missing.error == "data source lacks table radio.cells"


async def test_an_injection_string_stays_data(sql: PgSqlTool) -> None:
    evil = "10001'; DROP TABLE demo.cells;--"
    for request in (
        ToolRequest(query="SELECT * FROM demo.cells WHERE cellname = $1", params=[evil]),
        ToolRequest(query="SELECT * FROM demo.cells WHERE cellname = :c", params={"c": evil}),
    ):
        result = await sql.run(request)
        assert result.ok
        assert result.rows == []
    still = await sql.run(ToolRequest(query="SELECT count(*) AS n FROM demo.cells"))
    assert still.rows == [{"n": 3}]


async def test_a_parameter_of_the_wrong_type_is_a_clear_failure(sql: PgSqlTool) -> None:
    result = await sql.run(
        ToolRequest(query="SELECT * FROM demo.hour_stats WHERE cs_att = $1", params=["many"])
    )
    assert not result.ok
    assert result.error_kind == "failed"
    assert result.error is not None
    assert "invalid input for query argument $1" in result.error


async def test_describe_schema_lists_tables_and_columns(sql: PgSqlTool) -> None:
    text = await sql.describe_schema()
    assert "- demo.cells(cellname text, site text, neighbors text[])" in text
    assert "demo.hour_stats(cellname text, dt timestamp with time zone," in text
    assert "rtwp double precision" in text
    assert "users" not in text  # only the schemas asked for
    assert await sql.describe_schema(["nothing_here"]) == "No tables in schema(s) nothing_here."


async def test_unreachable_source_names_the_variable_without_the_password() -> None:
    with pytest.raises(ToolError, match="TOOLS_SQL_DSN") as caught:
        await PgSqlTool.connect("postgresql://reader:s3cret@127.0.0.1:1/nowhere")
    assert "s3cret" not in str(caught.value)


async def test_a_pool_passed_in_is_left_open(pool: asyncpg.Pool[Any]) -> None:
    tool = PgSqlTool(pool, statement_timeout_ms=1000)
    result = await tool.run(ToolRequest(query="SELECT 1 AS one"))
    await tool.close()
    assert result.rows == [{"one": 1}]
    assert await pool.fetchval("SELECT 2") == 2


async def test_queries_keep_working_after_the_demo_schema_is_reloaded(
    sql: PgSqlTool, database_url: str
) -> None:
    query = ToolRequest(
        query="SELECT count(*) AS n FROM demo.hour_stats WHERE cellname = $1", params=["10001"]
    )
    assert (await sql.run(query)).rows == [{"n": 20}]
    conn = await asyncpg.connect(database_url)
    try:
        await load_rows(conn, CELLS[:1], HOURS[:5])
    finally:
        await conn.close()
    again = await sql.run(query)
    assert again.ok, again.error
    assert again.rows == [{"n": 5}]
