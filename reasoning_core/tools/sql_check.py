"""The SQL gate: PostgreSQL's own grammar decides what a tool query may do.

Every query of the sql tool — written by a runbook or by the LLM planner — is
parsed with pglast (libpg_query, the parser of PostgreSQL itself) and accepted
only when it is exactly one SELECT (CTEs, set operations, subqueries and window
functions are fine) that

- reads relations only in the allowed data schemas, always schema-qualified
  (an unqualified name would resolve through search_path, e.g. to the bot's own
  `public.memories`); a CTE's own name is fine where the CTE is in scope;
- calls only functions on `ALLOWED_FUNCTIONS` (aggregates, window functions,
  math, date/time, string and array helpers) and casts only to `ALLOWED_TYPES`;
- has no data-modifying CTE, no SELECT INTO and no FOR UPDATE/SHARE.

Anything else raises `SqlRefusedError` whose message says what to change: the
LLM planner shows it to the model so it can rewrite the query. The database
role the tool runs as (migrations/008_reader_role.sql) is the second fence.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import Any

import pglast
from pglast import ast
from pglast.parser import ParseError

from reasoning_core.tools.sql_text import bind_named, named_parameters

# The lists are packed by hand, several names a line, for reading.
# fmt: off
AGGREGATES = frozenset({
    "count", "sum", "avg", "min", "max", "stddev", "stddev_pop", "stddev_samp", "variance",
    "var_pop", "var_samp", "percentile_cont", "percentile_disc", "mode", "corr", "covar_pop",
    "covar_samp", "regr_slope", "regr_intercept", "regr_r2", "regr_count", "regr_avgx",
    "regr_avgy", "bool_and", "bool_or", "every", "string_agg", "array_agg", "json_agg",
    "jsonb_agg", "json_object_agg", "jsonb_object_agg", "bit_and", "bit_or",
})
WINDOW_FUNCTIONS = frozenset({
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
    "first_value", "last_value", "nth_value",
})
MATH_FUNCTIONS = frozenset({
    "abs", "ceil", "ceiling", "floor", "round", "trunc", "sign", "sqrt", "cbrt", "power", "pow",
    "exp", "ln", "log", "log10", "mod", "div", "pi", "degrees", "radians", "width_bucket",
    "greatest", "least", "gcd", "lcm", "scale", "float8", "numeric", "int4", "int8",
})
DATETIME_FUNCTIONS = frozenset({
    "now", "current_date", "date_trunc", "date_part", "extract", "age", "make_date",
    "make_time", "make_timestamp", "make_timestamptz", "make_interval", "to_timestamp",
    "to_date", "to_char", "to_number", "timezone", "date_bin", "justify_days",
    "justify_hours", "justify_interval", "isfinite", "clock_timestamp", "statement_timestamp",
    "transaction_timestamp", "overlaps", "generate_series",
})
STRING_FUNCTIONS = frozenset({
    "length", "char_length", "character_length", "octet_length", "lower", "upper", "initcap",
    "btrim", "ltrim", "rtrim", "trim", "substring", "substr", "replace", "split_part",
    "concat", "concat_ws", "left", "right", "position", "strpos", "lpad", "rpad", "reverse",
    "repeat", "starts_with", "regexp_replace", "regexp_match", "regexp_matches",
    "regexp_split_to_array", "regexp_like", "format", "md5", "translate", "like_escape",
})
ARRAY_AND_JSON_FUNCTIONS = frozenset({
    "array_length", "cardinality", "unnest", "array_position", "array_positions",
    "array_to_string", "string_to_array", "array_append", "array_cat", "array_remove",
    "array_upper", "array_lower", "json_build_object", "jsonb_build_object",
    "json_build_array", "jsonb_build_array", "to_json", "to_jsonb", "jsonb_array_length",
    "json_array_length", "jsonb_extract_path_text", "json_extract_path_text",
})
# fmt: on
ALLOWED_FUNCTIONS = (
    AGGREGATES
    | WINDOW_FUNCTIONS
    | MATH_FUNCTIONS
    | DATETIME_FUNCTIONS
    | STRING_FUNCTIONS
    | ARRAY_AND_JSON_FUNCTIONS
)

#: Types a value may be cast to (by their names in pg_catalog), arrays of them too.
ALLOWED_TYPES = frozenset(
    """
    bool boolean int2 int4 int8 smallint int integer bigint numeric decimal float4 float8 real
    text varchar bpchar char name date time timetz timestamp timestamptz interval json jsonb
    uuid
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_WRITE_NODES = (
    ast.InsertStmt,
    ast.UpdateStmt,
    ast.DeleteStmt,
    ast.MergeStmt,
)


_STATEMENT_NAMES = {
    "VariableSetStmt": "SET/RESET",
    "VariableShowStmt": "SHOW",
    "TransactionStmt": "a transaction command",
    "DoStmt": "DO",
    "CopyStmt": "COPY",
    "CallStmt": "CALL",
}


class SqlRefusedError(ValueError):
    """The query is not one read-only SELECT over the allowed data; says what to change."""


class SqlSyntaxError(SqlRefusedError):
    """The query is not valid PostgreSQL at all."""


def check_select(sql: str, *, schemas: Collection[str]) -> None:
    """Raise `SqlRefusedError` unless `sql` is one allowed SELECT (``$n`` parameters fine)."""
    try:
        statements = pglast.parse_sql(sql)
    except ParseError as e:
        raise SqlSyntaxError(f"SQL error: {e}") from e
    if len(statements) != 1:
        raise SqlRefusedError(
            f"send exactly one SELECT statement (this text has {len(statements)})"
        )
    statement = statements[0].stmt
    if not isinstance(statement, ast.SelectStmt):
        kind = _STATEMENT_NAMES.get(type(statement).__name__)
        kind = kind or type(statement).__name__.removesuffix("Stmt").upper()
        raise SqlRefusedError(f"only SELECT queries may run, not {kind}")
    problems = list(_problems(statement, frozenset(), frozenset(schemas)))
    if problems:
        unique = list(dict.fromkeys(problems))
        raise SqlRefusedError("; ".join(unique[:5]))


def check_template(sql: str, *, schemas: Collection[str]) -> None:
    """`check_select` for a query written with ``:name`` placeholders (runbooks, the model)."""
    names = named_parameters(sql)
    bound, _ = bind_named(sql, dict.fromkeys(names))
    check_select(bound, schemas=schemas)


def refusal_reason(sql: str, *, schemas: Collection[str]) -> str | None:
    """Why the query would be refused, or None when it may run."""
    try:
        check_template(sql, schemas=schemas)
    except SqlRefusedError as e:
        return str(e)
    return None


def _problems(node: Any, ctes: frozenset[str], schemas: frozenset[str]) -> Iterator[str]:
    """Every reason to refuse found under `node`; `ctes` are the CTE names in scope."""
    if isinstance(node, list | tuple):
        for item in node:
            yield from _problems(item, ctes, schemas)
        return
    if not isinstance(node, ast.Node):
        return
    if isinstance(node, _WRITE_NODES):
        yield "data-modifying statements (INSERT, UPDATE, DELETE, MERGE) are not allowed"
        return
    if isinstance(node, ast.SelectStmt):
        yield from _select_problems(node, ctes, schemas)
        return
    if isinstance(node, ast.RangeVar):
        yield from _relation_problems(node, ctes, schemas)
    elif isinstance(node, ast.FuncCall):
        yield from _function_problems(node.funcname or ())
    elif isinstance(node, ast.TypeName):
        yield from _type_problems(node)
    for child in _children(node):
        yield from _problems(child, ctes, schemas)


def _select_problems(
    node: ast.SelectStmt, ctes: frozenset[str], schemas: frozenset[str]
) -> Iterator[str]:
    if node.intoClause is not None:
        yield "SELECT INTO creates a table; return the rows instead"
    if node.lockingClause:
        yield "FOR UPDATE/SHARE locks rows; remove the locking clause"
    inner = ctes
    with_clause = node.withClause
    if with_clause is not None:
        names = [cte.ctename for cte in with_clause.ctes or ()]
        for index, cte in enumerate(with_clause.ctes or ()):
            # A non-recursive CTE sees only the CTEs before it; a later name would
            # resolve through search_path to a real table.
            visible = names if with_clause.recursive else names[:index]
            query = cte.ctequery
            if not isinstance(query, ast.SelectStmt):
                yield f"CTE {cte.ctename} modifies data; a CTE must be a SELECT"
                continue
            yield from _problems(query, ctes | frozenset(visible), schemas)
        inner = ctes | frozenset(names)
    for child in _children(node, skip=("withClause", "intoClause")):
        yield from _problems(child, inner, schemas)


def _relation_problems(
    node: ast.RangeVar, ctes: frozenset[str], schemas: frozenset[str]
) -> Iterator[str]:
    allowed = ", ".join(sorted(schemas)) or "(none)"
    if node.catalogname:
        yield f"{node.catalogname}.{node.schemaname}.{node.relname}: name no database"
    elif node.schemaname is None:
        if node.relname not in ctes:
            yield (
                f"table {node.relname} has no schema: write schema.table "
                f"(allowed schemas: {allowed})"
            )
    elif node.schemaname not in schemas:
        yield (
            f"table {node.schemaname}.{node.relname} is outside the data schemas "
            f"(allowed: {allowed})"
        )


def _function_problems(funcname: Sequence[Any]) -> Iterator[str]:
    names = [getattr(part, "sval", "") for part in funcname]
    shown = ".".join(names)
    if len(names) > 2 or (len(names) == 2 and names[0] != "pg_catalog"):  # noqa: PLR2004
        yield f"function {shown} is not allowed (only built-in functions are)"
    elif names[-1].lower() not in ALLOWED_FUNCTIONS:
        yield (
            f"function {names[-1]} is not allowed; use aggregates, window functions, "
            "math, date/time or string functions"
        )


def _type_problems(node: ast.TypeName) -> Iterator[str]:
    names = [getattr(part, "sval", "") for part in node.names or ()]
    if node.pct_type or node.setof:
        yield "%TYPE and SETOF types are not allowed in a query"
        return
    qualified_elsewhere = len(names) > 1 and names[0] != "pg_catalog"
    if qualified_elsewhere or not names or names[-1].lower() not in ALLOWED_TYPES:
        yield (
            f"cast to {'.'.join(names)} is not allowed; cast to numbers, text, "
            "booleans, dates, times, intervals or json"
        )


def _children(node: ast.Node, *, skip: tuple[str, ...] = ()) -> Iterator[Any]:
    for name in node:  # the attribute names
        if name in skip:
            continue
        value = getattr(node, name, None)
        if isinstance(value, ast.Node | list | tuple):
            yield value
