"""The reader role the sql tool runs as, and the start-up audit of the tool's rights.

migrations/008_reader_role.sql creates `whytree_reader`: a LOGIN role without a
password that may only SELECT the data schemas. Without TOOLS_SQL_DSN the tool
pool logs in as it on the bot's own server (`reader_dsn`); where the server asks
for a password the bot's user switches to it per transaction instead. Either way
`grant_reader` gives it the data schemas (TOOLS_SQL_SCHEMAS) at start-up.

Whatever role the tool ends up with — the reader, or the role of an external
TOOLS_SQL_DSN — `AUDIT_SQL` asks PostgreSQL what it may do, and `audit_problems`
words anything beyond reading the data schemas: superuser, server-file or signal
powers, reading the bot's own tables, writing or creating anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from storage.errors import translate_errors

READER_ROLE = "whytree_reader"

#: Predefined roles whose powers a read-only tool must not have.
POWERFUL_ROLES = (
    "pg_read_server_files",
    "pg_write_server_files",
    "pg_execute_server_program",
    "pg_signal_backend",
    "pg_read_all_data",
    "pg_write_all_data",
)

#: Run as the tool's role; $1 the bot's own tables, $2 the powerful roles.
AUDIT_SQL = r"""
SELECT current_user::text AS role,
       current_setting('is_superuser') = 'on' AS superuser,
       ARRAY(SELECT r FROM unnest($2::text[]) r
             WHERE to_regrole(r) IS NOT NULL AND pg_has_role(current_user, r, 'MEMBER'))
         AS powers,
       ARRAY(SELECT format('%I.%I', n.nspname, c.relname)
             FROM pg_catalog.pg_class c
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE format('%I.%I', n.nspname, c.relname) = ANY($1::text[])
               AND has_table_privilege(c.oid, 'SELECT')) AS reads_own,
       ARRAY(SELECT format('%I.%I', n.nspname, c.relname)
             FROM pg_catalog.pg_class c
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
               AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\_%'
               AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')
             ORDER BY 1 LIMIT 5) AS writes,
       ARRAY(SELECT nspname::text FROM pg_catalog.pg_namespace
             WHERE nspname <> 'information_schema' AND nspname NOT LIKE 'pg\_%'
               AND has_schema_privilege(oid, 'CREATE')
             ORDER BY 1) AS creates_in,
       has_database_privilege(current_database(), 'CREATE') AS creates_schemas
"""

_OWN_TABLES_SQL = """
SELECT format('%I.%I', schemaname, tablename) FROM pg_catalog.pg_tables
WHERE schemaname = current_schema() ORDER BY 1
"""


def reader_dsn(dsn: str) -> str | None:
    """The bot's DSN logging in as the reader, without a password (None: not a URI)."""
    parts = urlsplit(dsn)
    if parts.scheme not in ("postgres", "postgresql"):
        return None
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{READER_ROLE}@{host}"))


async def grant_reader(pool: asyncpg.Pool[Any], schemas: Sequence[str]) -> None:
    """Let the reader SELECT the data schemas (a no-op where the role does not exist)."""
    async with translate_errors("granting the reader role its data schemas"):
        await pool.execute("SELECT whytree_grant_reader($1::text[])", list(schemas))


async def own_tables(pool: asyncpg.Pool[Any]) -> list[str]:
    """The bot's own tables (schema.table), which no tool may read."""
    async with translate_errors("listing the bot's tables"):
        return [r[0] for r in await pool.fetch(_OWN_TABLES_SQL)]


def audit_problems(row: Mapping[str, Any]) -> list[str]:
    """What the audited role may do beyond reading the data schemas, in words."""
    problems = []
    if row["superuser"]:
        problems.append("is a superuser")
    if row["powers"]:
        problems.append("has the powers of " + ", ".join(row["powers"]))
    if row["reads_own"]:
        problems.append("can read the bot's tables " + ", ".join(row["reads_own"][:5]))
    if row["writes"]:
        problems.append("can write to " + ", ".join(row["writes"]))
    if row["creates_in"]:
        problems.append("can create objects in schema " + ", ".join(row["creates_in"]))
    if row["creates_schemas"]:
        problems.append("can create schemas")
    return problems
