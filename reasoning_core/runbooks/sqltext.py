"""SQL templates of runbook checks: the read-only guard and named-parameter compilation.

A check's SQL is written with named parameters (``:cell``, ``:recent_start``).
`compile_sql` turns it into asyncpg's positional form (``$1``) plus the list of
names, so values from the question only ever travel as bound parameters.
`ensure_read_only` rejects anything but one SELECT/WITH statement; it is
deliberately conservative (a forbidden word anywhere rejects the query), and
the sql tool runs every query in a READ ONLY transaction as a second line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FORBIDDEN_KEYWORDS = frozenset(
    """
    insert update delete merge upsert drop alter create truncate grant revoke copy call do
    execute exec set reset lock vacuum analyze reindex cluster comment refresh listen notify
    unlisten discard prepare deallocate import security into checkpoint load begin commit
    rollback savepoint release start abort
    """.split()  # noqa: SIM905 - a word list reads better as text
)
FORBIDDEN_FUNCTIONS = frozenset(
    """
    set_config pg_terminate_backend pg_cancel_backend pg_reload_conf pg_rotate_logfile
    lo_import lo_export lo_unlink lo_create pg_read_file pg_read_binary_file pg_ls_dir
    pg_stat_file dblink dblink_exec nextval setval pg_sleep pg_advisory_lock
    pg_advisory_xact_lock pg_notify query_to_xml pg_switch_wal
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)")
_POSITIONAL = re.compile(r"\$\d+")


class SQLTemplateError(ValueError):
    """The SQL of a check is not an acceptable read-only template."""


def mask_sql(sql: str) -> str:
    """The text with comments and literal contents blanked, same length.

    Quotes and delimiters stay in place so positions in the masked text match
    the original; only what is code survives for keyword and parameter scans.
    """
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        end = _literal_end(sql, i)
        if end == i:
            out.append(sql[i])
            i += 1
            continue
        chunk = sql[i:end]
        if chunk[0] in "-/":  # comments vanish entirely
            out.append(" " * len(chunk))
        else:  # literals keep their delimiters
            out.append(chunk[0] + " " * max(0, len(chunk) - 2) + chunk[-1])
        i = end
    return "".join(out)


def _literal_end(sql: str, i: int) -> int:
    """End index of a comment/literal starting at i, or i when none starts there."""
    two = sql[i : i + 2]
    if two == "--":
        nl = sql.find("\n", i)
        return len(sql) if nl < 0 else nl
    if two == "/*":
        close = sql.find("*/", i + 2)
        if close < 0:
            raise SQLTemplateError("unterminated /* comment")
        return close + 2
    ch = sql[i]
    if ch in "'\"":
        return _quoted_end(sql, i, ch, backslash=i > 0 and sql[i - 1] in "eE")
    if ch == "$":
        tag = _DOLLAR_TAG.match(sql, i)
        if tag and not (i > 0 and (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            close = sql.find(tag.group(0), tag.end())
            if close < 0:
                raise SQLTemplateError("unterminated dollar-quoted string")
            return close + len(tag.group(0))
    return i


def _quoted_end(sql: str, i: int, quote: str, *, backslash: bool) -> int:
    j = i + 1
    while j < len(sql):
        if backslash and sql[j] == "\\":
            j += 2
            continue
        if sql[j] == quote:
            if sql[j + 1 : j + 2] == quote:  # doubled quote inside the literal
                j += 2
                continue
            return j + 1
        j += 1
    raise SQLTemplateError(f"unterminated {quote} quote")


def ensure_read_only(sql: str) -> None:
    """Raise SQLTemplateError unless `sql` is one SELECT or WITH statement with no writes."""
    masked = mask_sql(sql).strip()
    if masked.endswith(";"):
        masked = masked[:-1].rstrip()
    if not masked:
        raise SQLTemplateError("empty query")
    if ";" in masked:
        raise SQLTemplateError("only one statement is allowed (found ';' followed by more text)")
    if _POSITIONAL.search(masked):
        raise SQLTemplateError("use named parameters (:name), not positional $n")
    words = [w.lower() for w in _WORD.findall(masked)]
    if not words or words[0] not in ("select", "with"):
        raise SQLTemplateError("a check query must start with SELECT or WITH")
    bad = sorted(set(words) & FORBIDDEN_KEYWORDS)
    if bad:
        raise SQLTemplateError(f"write or session statement keyword not allowed: {bad[0].upper()}")
    bad_fn = sorted(set(words) & FORBIDDEN_FUNCTIONS)
    if bad_fn:
        raise SQLTemplateError(f"function not allowed in a read-only check: {bad_fn[0]}")


def sql_parameter_names(sql: str) -> list[str]:
    """Named parameters used in the template, in order of first use."""
    names: list[str] = []
    for m in _PARAM.finditer(mask_sql(sql)):
        if m.group(1) not in names:
            names.append(m.group(1))
    return names


@dataclass(frozen=True)
class CompiledSQL:
    """asyncpg-ready text (``$1``...) and the parameter name behind each position."""

    sql: str
    names: tuple[str, ...]

    def args(self, values: Mapping[str, Any]) -> list[Any]:
        """Positional arguments for the query, in `names` order."""
        missing = [name for name in self.names if name not in values]
        if missing:
            raise SQLTemplateError(f"no value for parameter(s): {', '.join(missing)}")
        return [values[name] for name in self.names]


def compile_sql(template: str) -> CompiledSQL:
    """Replace ``:name`` by ``$n`` (the same name, the same n); literals are left alone."""
    masked = mask_sql(template)
    names: list[str] = []
    parts: list[str] = []
    last = 0
    for m in _PARAM.finditer(masked):
        name = m.group(1)
        if name not in names:
            names.append(name)
        parts.append(template[last : m.start()])
        parts.append(f"${names.index(name) + 1}")
        last = m.end()
    parts.append(template[last:])
    return CompiledSQL(sql="".join(parts), names=tuple(names))
