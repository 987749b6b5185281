"""Real PostgreSQL for tests: the embedded server, or TEST_DATABASE_URL.

Migrations are applied once per test session to a template database; every
test that asks for `database_url` gets a fresh copy of it (CREATE DATABASE ...
TEMPLATE), so tests are isolated even when the code under test uses a pool.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from storage.migrate import apply_migrations


def with_database(dsn: str, database: str) -> str:
    """The same server, another database."""
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path="/" + database))


async def create_template(server_dsn: str) -> str:
    """Create a migrated template database; returns its name."""
    name = f"whytree_tpl_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(server_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    conn = await asyncpg.connect(with_database(server_dsn, name))
    try:
        await apply_migrations(conn)
    finally:
        await conn.close()
    return name


async def clone(server_dsn: str, template: str) -> str:
    name = f"whytree_t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(server_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    finally:
        await admin.close()
    return name


async def drop(server_dsn: str, name: str) -> None:
    admin = await asyncpg.connect(server_dsn)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()
