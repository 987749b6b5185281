"""Named parameters and read-only screening of SQL text (pure helpers of the sql tool)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasoning_core.tools.sql_text import (
    SqlTextError,
    bind_named,
    first_keyword,
    has_multiple_statements,
    named_parameters,
    write_keywords,
)


def test_named_parameters_become_positional_in_order_of_first_use() -> None:
    sql = (
        "SELECT x::text, ':skip' AS s, \"col:name\" FROM t -- :comment\n"
        "WHERE a = :cell AND b > :since /* :block */ AND c = :cell AND d = $$:body$$"
    )
    assert named_parameters(sql) == ["cell", "since"]
    text, args = bind_named(sql, {"cell": "10001", "since": 5, "unused": 1})
    assert args == ["10001", 5]
    assert text.endswith("WHERE a = $1 AND b > $2 /* :block */ AND c = $1 AND d = $$:body$$")
    assert "x::text, ':skip' AS s, \"col:name\"" in text


def test_a_missing_value_is_an_error() -> None:
    with pytest.raises(SqlTextError, match=":since"):
        bind_named("SELECT 1 WHERE a = :cell AND b = :since", {"cell": 1})


@given(st.text())
def test_values_never_become_sql(value: str) -> None:
    text, args = bind_named("SELECT * FROM demo.cells WHERE cellname = :cell", {"cell": value})
    assert text == "SELECT * FROM demo.cells WHERE cellname = $1"
    assert args == [value]


@pytest.mark.parametrize(
    ("sql", "keyword"),
    [
        ("select 1", "select"),
        ("  -- note\n /* block */ WITH x AS (SELECT 1) SELECT * FROM x", "with"),
        ("(SELECT 1)", "select"),
        ("DELETE FROM t", "delete"),
        ("", ""),
    ],
)
def test_first_keyword(sql: str, keyword: str) -> None:
    assert first_keyword(sql) == keyword


def test_write_keywords_outside_literals() -> None:
    assert write_keywords("SELECT 'delete me' AS \"drop\" FROM t -- update") == []
    assert write_keywords("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d") == ["delete"]
    assert write_keywords("SELECT 1; DROP TABLE t") == ["drop"]


def test_multiple_statements() -> None:
    assert not has_multiple_statements("SELECT 1;")
    assert not has_multiple_statements("SELECT ';' AS semi; -- ; trailing")
    assert has_multiple_statements("SELECT 1; SELECT 2")
