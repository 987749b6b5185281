from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from storage.migrate import apply_migrations, discover
from tests import pg


async def test_template_has_every_migration_recorded(pool: asyncpg.Pool[Any]) -> None:
    rows = await pool.fetch("SELECT version, name FROM schema_migrations ORDER BY version")
    assert [r["name"] for r in rows] == [m.name for m in discover()]
    tables = {
        r["tablename"]
        for r in await pool.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    }
    assert {"users", "sessions", "messages", "schema_migrations"} <= tables


async def test_two_processes_migrating_at_once_apply_each_file_once(pg_server_dsn: str) -> None:
    name = await pg.clone(pg_server_dsn, "template0")
    dsn = pg.with_database(pg_server_dsn, name)
    try:
        conns = [await asyncpg.connect(dsn) for _ in range(2)]
        results = await asyncio.gather(*(apply_migrations(c) for c in conns))
        applied = sorted(results, key=len)
        assert applied[0] == []
        assert applied[1] == [m.name for m in discover()]
        assert await conns[0].fetchval("SELECT count(*) FROM schema_migrations") == len(discover())
        for c in conns:
            await c.close()
    finally:
        await pg.drop(pg_server_dsn, name)
