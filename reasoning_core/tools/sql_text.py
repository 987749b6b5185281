"""Pure helpers for SQL text: named parameters and read-only screening.

Runbook checks are written with `:name` placeholders; PostgreSQL (and asyncpg)
binds `$1, $2, ...`. `bind_named` rewrites one into the other while skipping
string literals, quoted identifiers, dollar-quoted bodies, comments and `::`
casts, so a value never becomes SQL text. `write_keywords` lets a runbook loader
reject a check that would write before it ever reaches a database (the READ ONLY
transaction of the sql tool is the second line of defence).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

#: Statements the sql tool runs; anything else is refused before execution.
READ_STATEMENTS = frozenset({"select", "with", "values", "table", "explain", "show"})

#: Keywords that start a data- or schema-changing statement (also inside a CTE).
WRITE_KEYWORDS = frozenset(
    {
        "insert",
        "update",
        "delete",
        "merge",
        "truncate",
        "create",
        "drop",
        "alter",
        "grant",
        "revoke",
        "copy",
        "vacuum",
        "reindex",
        "cluster",
        "comment",
        "lock",
        "call",
        "do",
        "refresh",
        "discard",
        "reset",
        "set",
        "listen",
        "notify",
        "commit",
        "rollback",
        "begin",
        "savepoint",
        "prepare",
        "execute",
        "import",
    }
)

_CODE = re.compile(
    r"""
    (?P<skip>
        '(?:[^']|'')*'             # string literal ('' escapes)
      | "(?:[^"]|"")*"             # quoted identifier
      | (?P<dq>\$(?:[A-Za-z_]\w*)?\$)(?:.|\n)*?(?P=dq)  # dollar-quoted body
      | --[^\n]*                   # line comment
      | /\*(?:.|\n)*?\*/           # block comment
      | ::                         # a cast, not a parameter
    )
    | :(?P<name>[A-Za-z_]\w*)      # a named parameter
    | (?P<word>[A-Za-z_]\w*)       # a bare word
    """,
    re.VERBOSE,
)


class SqlTextError(ValueError):
    """A template and its parameters do not fit together."""


def _tokens(sql: str) -> Iterator[re.Match[str]]:
    return _CODE.finditer(sql)


def named_parameters(sql: str) -> list[str]:
    """The distinct `:name` placeholders of a template, in order of appearance."""
    names: list[str] = []
    for m in _tokens(sql):
        name = m.group("name")
        if name and name not in names:
            names.append(name)
    return names


def bind_named(sql: str, params: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """Rewrite `:name` placeholders as `$n`; returns the SQL and the positional args."""
    order: dict[str, int] = {}
    out: list[str] = []
    pos = 0
    for m in _tokens(sql):
        name = m.group("name")
        if not name:
            continue
        if name not in params:
            raise SqlTextError(f"no value for parameter :{name}")
        index = order.setdefault(name, len(order) + 1)
        out.append(sql[pos : m.start()])
        out.append(f"${index}")
        pos = m.end()
    out.append(sql[pos:])
    return "".join(out), [params[name] for name in order]


def _words(sql: str) -> Iterator[str]:
    for m in _tokens(sql):
        word = m.group("word")
        if word:
            yield word.lower()


def first_keyword(sql: str) -> str:
    """The statement's first keyword, lower-cased ('' for an empty statement)."""
    return next(_words(sql), "")


def write_keywords(sql: str) -> list[str]:
    """Write keywords found outside literals and comments, in order (may be empty).

    Crude on purpose: a column named `comment` is flagged too, which errs on the
    safe side for a runbook loader.
    """
    return [w for w in _words(sql) if w in WRITE_KEYWORDS]


def has_multiple_statements(sql: str) -> bool:
    """True when a `;` outside literals and comments is followed by more SQL."""
    masked = _CODE.sub(lambda m: " " * len(m.group(0)) if m.group("skip") else m.group(0), sql)
    parts = [p for p in masked.split(";") if p.strip()]
    return len(parts) > 1
