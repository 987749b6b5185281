"""The SQL gate: PostgreSQL's grammar (pglast) admits one SELECT over the data schemas."""

from __future__ import annotations

import pytest

from reasoning_core.runbooks import load_runbooks
from reasoning_core.tools.sql_check import (
    SqlRefusedError,
    SqlSyntaxError,
    check_select,
    check_template,
    refusal_reason,
)

DATA = ("demo",)

#: What a prompt-injected planner tried (issue 14), and what the gate must say.
INJECTED = [
    ("SELECT content FROM public.memories", "public.memories is outside the data schemas"),
    ("SELECT question, answer FROM messages WHERE user_id <> 1", "messages has no schema"),
    ("SELECT pg_read_file('/etc/hostname')", "function pg_read_file is not allowed"),
    ("SELECT rolname FROM pg_catalog.pg_roles", "pg_catalog.pg_roles is outside"),
    ("SELECT rolname FROM pg_roles", "pg_roles has no schema"),
    (
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity",
        "function pg_terminate_backend is not allowed",
    ),
    (
        "WITH gone AS (DELETE FROM demo.cells RETURNING *) SELECT count(*) FROM gone",
        "CTE gone modifies data",
    ),
    (
        "SELECT * FROM demo.cells WHERE cellname IN "
        "(WITH x AS (UPDATE demo.cells SET site = 'x' RETURNING cellname) SELECT * FROM x)",
        "CTE x modifies data",
    ),
    ("SELECT * INTO demo.copy FROM demo.cells", "SELECT INTO"),
    ("SELECT * FROM demo.cells FOR UPDATE", "FOR UPDATE/SHARE"),
    ("SELECT * FROM demo.cells FOR SHARE SKIP LOCKED", "FOR UPDATE/SHARE"),
    ("SELECT 1; SELECT 2", "exactly one SELECT"),
    ("SELECT 1; DELETE FROM demo.cells", "exactly one SELECT"),
    ("RESET ROLE", "not SET/RESET"),
    ("SET ROLE postgres", "not SET/RESET"),
    ("SELECT set_config('role', 'none', false)", "function set_config is not allowed"),
    ("SELECT current_setting('data_directory')", "function current_setting is not allowed"),
    ("DELETE FROM demo.cells", "not DELETE"),
    ("COPY demo.cells TO PROGRAM 'id'", "not COPY"),
    ("EXPLAIN ANALYZE SELECT 1", "not EXPLAIN"),
    ("SELECT 'public.memories'::regclass", "cast to regclass is not allowed"),
    ("SELECT lo_import('/etc/passwd')", "function lo_import is not allowed"),
    ("SELECT dblink('host=x', 'select 1')", "function dblink is not allowed"),
    ("SELECT demo.helper(1)", "function demo.helper is not allowed"),
    ("SELECT other.public.f FROM other.public.t", "name no database"),
    ("SELECT * FROM demo.cells, pg_sleep(10)", "function pg_sleep is not allowed"),
    # A CTE name shadows a table only where the CTE is in scope.
    (
        "WITH a AS (SELECT * FROM memories), memories AS (SELECT 1) SELECT * FROM a",
        "memories has no schema",
    ),
    (
        "SELECT * FROM (WITH memories AS (SELECT 1) SELECT * FROM memories) a, memories",
        "memories has no schema",
    ),
]

ALLOWED = [
    "SELECT count(*) FROM demo.hour_stats",
    "TABLE demo.cells",
    "VALUES (1, 'a')",
    "SELECT cellname FROM demo.cells WHERE cellname = $1",
    "WITH last AS (SELECT max(dt) AS t FROM demo.hour_stats) SELECT * FROM last",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
    "WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a) SELECT * FROM b",
    "SELECT extract(epoch FROM now()), date_trunc('hour', dt) AT TIME ZONE 'UTC', "
    "avg(ps_traffic) FILTER (WHERE rtwp > -100)::numeric(10, 2), "
    "row_number() OVER (ORDER BY dt), coalesce(cs_att, 0), greatest(1, 2), "
    "substring(cellname FROM 1 FOR 3), trim(site), lower(site) || upper(site), "
    "percentile_cont(0.5) WITHIN GROUP (ORDER BY rtwp), interval '1 day', x::text[] "
    "FROM demo.hour_stats h JOIN demo.cells c USING (cellname) GROUP BY 1, 2, 4, 5, 6, 7, 8, 9",
    "SELECT g FROM generate_series(1, 3) g",
    "SELECT pg_catalog.count(*) FROM demo.cells",
    "SELECT (SELECT max(dt) FROM demo.hour_stats) AS latest",
    "SELECT cellname FROM demo.cells WHERE EXISTS (SELECT 1 FROM demo.hour_stats h "
    "WHERE h.cellname = cells.cellname) ORDER BY 1 LIMIT 5",
]


@pytest.mark.parametrize(("sql", "reason"), INJECTED)
def test_injected_queries_are_refused_with_a_reason(sql: str, reason: str) -> None:
    with pytest.raises(SqlRefusedError) as refused:
        check_select(sql, schemas=DATA)
    assert reason in str(refused.value)


@pytest.mark.parametrize("sql", ALLOWED)
def test_read_queries_over_the_data_schemas_pass(sql: str) -> None:
    check_select(sql, schemas=DATA)


def test_a_schema_outside_the_setting_is_refused_and_inside_passes() -> None:
    assert refusal_reason("SELECT * FROM radio.cells", schemas=DATA) is not None
    assert refusal_reason("SELECT * FROM radio.cells", schemas=("demo", "radio")) is None


def test_a_syntax_error_is_its_own_kind() -> None:
    with pytest.raises(SqlSyntaxError, match="syntax error"):
        check_select("SELECT cellname FROMM demo.cells", schemas=DATA)


def test_named_parameters_are_checked_like_positional_ones() -> None:
    check_template(
        "SELECT * FROM demo.cells WHERE cellname = :cell AND site = :cell", schemas=DATA
    )
    with pytest.raises(SqlRefusedError, match="memories"):
        check_template("SELECT * FROM public.memories WHERE user_id = :user", schemas=DATA)


def test_the_reason_names_the_allowed_schemas_so_the_model_can_rewrite() -> None:
    reason = refusal_reason("SELECT * FROM hour_stats", schemas=DATA)
    assert reason == "table hour_stats has no schema: write schema.table (allowed schemas: demo)"


def _shipped_sql() -> list[tuple[str, str]]:
    queries: list[tuple[str, str | None]] = []
    for runbook in load_runbooks().runbooks.values():
        queries += [(f"{runbook.id}/{c.id}", c.query) for c in runbook.checks if c.tool == "sql"]
        queries += [
            (f"{runbook.id}/{p.name}", p.options_query)
            for p in runbook.parameters
            if p.options_query
        ]
        anchor = runbook.window.anchor
        if anchor is not None and anchor.tool == "sql":
            queries.append((f"{runbook.id}/anchor", anchor.query))
    return [(where, sql) for where, sql in queries if sql]


def test_every_shipped_runbook_query_passes_the_gate() -> None:
    queries = _shipped_sql()
    assert len(queries) >= 8  # anchors, options and checks of the shipped runbooks
    refused = {where: refusal_reason(sql, schemas=DATA) for where, sql in queries}
    assert {where: why for where, why in refused.items() if why} == {}
