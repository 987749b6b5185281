"""Real PostgreSQL for tests: the embedded server, or TEST_DATABASE_URL.

Migrations are applied once per test session to a template database; every
test that asks for `database_url` gets a fresh copy of it (CREATE DATABASE ...
TEMPLATE), so tests are isolated even when the code under test uses a pool.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
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


#: The statement that holds the stock row's lock in `row_lock_held` (a token planted in it).
HOLDING_STATEMENT = "SELECT sold FROM stock WHERE id = 1 /* token=s3cr3t-abcdef */ FOR UPDATE"
#: Sessions waiting for it: the first for the holder's transaction, the others queued behind
#: the first for the row's tuple lock (PostgreSQL names the first as their blocker).
WAITERS = 3
#: The statement that waits for it.
WAITING_STATEMENT = "UPDATE stock SET sold = sold + 1 WHERE id = 1"


@asynccontextmanager
async def row_lock_held(dsn: str) -> AsyncIterator[None]:
    """A `stock` table whose row lock one session holds (idle in its transaction) while
    `WAITERS` others queue for it — the lab's lock fault, on a real server — until the
    block ends."""
    setup = await asyncpg.connect(dsn)
    await setup.execute(
        "CREATE TABLE IF NOT EXISTS stock (id int PRIMARY KEY, sold int);"
        "INSERT INTO stock VALUES (1, 0) ON CONFLICT DO NOTHING"
    )
    holder = await asyncpg.connect(dsn)
    waiters = [await asyncpg.connect(dsn) for _ in range(WAITERS)]
    await holder.execute("BEGIN")
    await holder.execute(HOLDING_STATEMENT)
    waiting = [asyncio.create_task(w.execute(WAITING_STATEMENT)) for w in waiters]
    try:
        for _ in range(200):  # until PostgreSQL shows every waiter waiting for a lock
            if (
                await setup.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                )
                == WAITERS
            ):
                break
            await asyncio.sleep(0.05)
        yield
    finally:
        await holder.execute("ROLLBACK")
        await asyncio.gather(*waiting)
        for conn in (holder, *waiters, setup):
            await conn.close()
