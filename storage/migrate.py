"""Forward-only migrations: migrations/NNN_name.sql, applied in order.

Each file runs in its own transaction and is recorded in schema_migrations. A
session-level advisory lock makes two processes starting at once safe: the
second waits, then finds nothing left to apply.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import resources

from storage.pool import Connection

log = logging.getLogger(__name__)

_LOCK_KEY = 0x77687974  # "whyt": any constant unique to this application
_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def discover() -> list[Migration]:
    """The migrations shipped in the `migrations` package, in version order."""
    found = []
    for entry in resources.files("migrations").iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), entry.name, entry.read_text("utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration versions in {[m.name for m in found]}")
    return found


READ_ONLY_PROBLEM = (
    "the database is read-only (transaction_read_only is on): whytree writes sessions, "
    "trees and jobs — point DATABASE_URL at a writable server and a role that may write"
)


async def read_only(conn: Connection) -> bool:
    """Whether this connection's transactions are read-only (a standby, or a role's default)."""
    return bool(await conn.fetchval("SELECT current_setting('transaction_read_only') = 'on'"))


async def pending_migrations(conn: Connection) -> list[str]:
    """The shipped migrations not applied yet, without applying them."""
    exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
    done = set()
    if exists:
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
    return [m.name for m in discover() if m.version not in done]


async def apply_migrations(conn: Connection, *, until: int | None = None) -> list[str]:
    """Apply pending migrations (those up to version `until`, when given: a database of an
    older schema, for migration tests); returns the names applied now."""
    await conn.execute("SELECT pg_advisory_lock($1)", _LOCK_KEY)
    try:
        await conn.execute(
            """CREATE TABLE IF NOT EXISTS schema_migrations (
                   version integer PRIMARY KEY,
                   name text NOT NULL,
                   applied_at timestamptz NOT NULL DEFAULT now())"""
        )
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        applied = []
        for migration in discover():
            if migration.version in done or (until is not None and migration.version > until):
                continue
            async with conn.transaction():
                await conn.execute(migration.sql)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                    migration.version,
                    migration.name,
                )
            log.info("applied migration %s", migration.name)
            applied.append(migration.name)
        return applied
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)
