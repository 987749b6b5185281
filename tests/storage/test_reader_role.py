"""The reader role: what the sql tool runs as, and the start-up audit of its rights.

The queries a prompt-injected planner tried (issue 14) are refused by the SQL gate
before they run; run directly as the reader they fail with permission errors too.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest

from bot.config import Settings, load_settings
from bot.wiring.app import open_runtime
from demo.loader import load_rows
from demo.simulation import CellRow, HourRow
from reasoning_core.errors import ConfigurationError
from reasoning_core.tools import ToolRequest
from storage.pool import Connection, create_pool
from storage.reader import READER_ROLE, grant_reader, own_tables, reader_dsn
from storage.sql_tool import PgSqlTool

CELLS = [CellRow("10001", "S1", ("10002",)), CellRow("10002", "S1", ("10001",))]
HOURS = [
    HourRow(c.cellname, datetime(2026, 10, 1, h, tzinfo=UTC), 100.0, 10, 20, 0.5, 1.5, -105.0)
    for c in CELLS
    for h in range(3)
]

#: Each is refused by the gate, and denied by PostgreSQL when run as the reader.
INJECTED = {
    "another user's memories": "SELECT goal_summary FROM public.memories",
    "everyone's messages": "SELECT question, answer FROM public.messages",
    "a server file": "SELECT pg_read_file('/etc/hostname')",
    "the role list": "SELECT rolname FROM pg_catalog.pg_roles",
    "killing the bot's connections": (
        "SELECT count(pg_terminate_backend(pid)) FROM pg_catalog.pg_stat_activity "
        "WHERE pid <> pg_backend_pid() AND datname = current_database()"
    ),
    "a write inside a CTE": (
        "WITH gone AS (DELETE FROM demo.cells RETURNING 1) SELECT count(*) FROM gone"
    ),
}


async def _reader_exists(conn: Connection) -> bool:
    return bool(await conn.fetchval("SELECT to_regrole($1) IS NOT NULL", READER_ROLE))


@pytest.fixture
async def demo_db(database_url: str) -> AsyncIterator[str]:
    """A migrated database with the demo data loaded (the loader grants the reader)."""
    pool = await create_pool(database_url)
    try:
        async with pool.acquire() as conn:
            if not await _reader_exists(conn):  # pragma: no cover - depends on the server
                pytest.skip("the test server's user cannot create roles (no CREATEROLE)")
            await conn.execute(
                "INSERT INTO users (id) VALUES (1), (2);"
                "INSERT INTO memories (user_id, chat_id, goal_summary, strategy, confidence) "
                "VALUES (2, 2, 'the secret plans of user 2', 'quick', 0.9)"
            )
        await load_rows(pool, CELLS, HOURS)
    finally:
        await pool.close()
    yield database_url


async def test_the_reader_is_an_ordinary_role_with_a_login_and_no_powers(
    pool: asyncpg.Pool[Any],
) -> None:
    row = await pool.fetchrow(
        "SELECT rolsuper, rolcanlogin, rolinherit, rolcreaterole, rolcreatedb, rolbypassrls,"
        " rolpassword IS NULL AS no_password FROM pg_authid WHERE rolname = $1",
        READER_ROLE,
    )
    assert row is not None
    assert dict(row) == {
        "rolsuper": False, "rolcanlogin": True, "rolinherit": False, "rolcreaterole": False,
        "rolcreatedb": False, "rolbypassrls": False, "no_password": True,
    }  # fmt: skip


@pytest.mark.parametrize("what", list(INJECTED))
async def test_injected_queries_fail_with_permission_errors_as_the_reader(
    demo_db: str, what: str
) -> None:
    login = reader_dsn(demo_db)
    assert login is not None
    bot = await asyncpg.connect(demo_db)  # the bot's own connection, a target to kill
    conn = await asyncpg.connect(login)
    try:
        assert await conn.fetchval("SELECT session_user") == READER_ROLE
        assert await conn.fetchval("SELECT count(*) FROM demo.cells") > 0  # the data: yes
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.fetch(INJECTED[what])  # no READ ONLY transaction: the rights alone
        assert await bot.fetchval("SELECT count(*) FROM demo.cells") == len(CELLS)
    finally:
        await conn.close()
        await bot.close()


async def test_the_reader_cannot_become_the_bot_user(demo_db: str) -> None:
    conn = await asyncpg.connect(reader_dsn(demo_db) or "")
    try:
        bot_user = await conn.fetchval("SELECT datdba::regrole::text FROM pg_database LIMIT 1")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(f'SET ROLE "{bot_user}"')
        await conn.execute("RESET ROLE")  # back to itself: still the reader
        assert await conn.fetchval("SELECT current_user") == READER_ROLE
    finally:
        await conn.close()


@pytest.mark.parametrize("switch", ["login", "set role"])
async def test_the_tool_refuses_every_injected_query_before_it_runs(
    demo_db: str, switch: str
) -> None:
    dsn = reader_dsn(demo_db) if switch == "login" else demo_db
    tool = await PgSqlTool.connect(
        dsn or "", role=READER_ROLE if switch == "set role" else None, pool_size=1
    )
    bot_pool = await create_pool(demo_db, min_size=2, max_size=2)
    try:
        for what, query in INJECTED.items():
            result = await tool.run(ToolRequest(query=query))
            assert result.error_kind == "refused", (what, result)
        counted = await tool.run(ToolRequest(query="SELECT count(*) AS n FROM demo.cells"))
        assert counted.ok and counted.rows[0]["n"] > 0
        role, problems = await tool.audit(await own_tables(bot_pool))
        assert (role, problems) == (READER_ROLE, [])
        # the bot's own connections are alive and the memories untouched
        assert await bot_pool.fetchval("SELECT count(*) FROM memories") == 1
    finally:
        await bot_pool.close()
        await tool.close()


async def test_set_role_per_query_denies_what_the_reader_may_not_read(demo_db: str) -> None:
    # The fallback where the reader cannot log in: the bot's user switches per transaction.
    tool = await PgSqlTool.connect(demo_db, role=READER_ROLE, schemas=("demo", "public"))
    try:
        # public is let through the gate here on purpose: the role alone must deny it
        result = await tool.run(ToolRequest(query="SELECT goal_summary FROM public.memories"))
    finally:
        await tool.close()
    assert result.error_kind == "refused"
    assert result.error is not None and "permission denied for table memories" in result.error


async def test_grants_cover_tables_created_later_and_a_reloaded_demo(demo_db: str) -> None:
    pool = await create_pool(demo_db)
    try:
        await pool.execute("CREATE SCHEMA radio")
        await grant_reader(pool, ["radio"])
        await pool.execute("CREATE TABLE radio.sites (site text)")  # after the grant
        await load_rows(pool, CELLS, HOURS)  # drops and recreates demo
    finally:
        await pool.close()
    conn = await asyncpg.connect(reader_dsn(demo_db) or "")
    try:
        assert await conn.fetchval("SELECT count(*) FROM radio.sites") == 0
        assert await conn.fetchval("SELECT count(*) FROM demo.hour_stats") > 0
    finally:
        await conn.close()


def _settings(database_url: str, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        "telegram_bot_token": None,
        "openai_api_key": None,
        "openai_base_url": None,
    }
    return load_settings(env_file=None, **(values | extra))


async def test_the_embedded_default_starts_with_the_reader(demo_db: str) -> None:
    async with open_runtime(_settings(demo_db)) as runtime:
        assert runtime.service is not None


async def test_a_tools_dsn_that_can_write_stops_start_up(demo_db: str, pg_server_dsn: str) -> None:
    writer = f"whytree_writer_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(demo_db)
    try:
        await admin.execute(
            f"CREATE ROLE {writer} LOGIN; GRANT USAGE ON SCHEMA demo TO {writer};"
            f"GRANT SELECT, INSERT ON demo.cells TO {writer}"
        )
        writer_dsn = reader_dsn(demo_db) or ""
        writer_dsn = writer_dsn.replace(f"{READER_ROLE}@", f"{writer}@")
        with pytest.raises(ConfigurationError) as stopped:
            async with open_runtime(_settings(demo_db, tools_sql_dsn=writer_dsn)):
                pass
        message = str(stopped.value)
        assert message.startswith("TOOLS_SQL_DSN (")
        assert f"role {writer} can write to demo.cells" in message
        assert "TOOLS_SQL_ALLOW_UNSAFE=true" in message and "\n" not in message
    finally:
        await admin.execute(f"DROP OWNED BY {writer}; DROP ROLE {writer}")
        await admin.close()


async def test_the_bots_own_superuser_as_tools_dsn_stops_start_up_unless_allowed(
    demo_db: str,
) -> None:
    with pytest.raises(ConfigurationError, match=r"is a superuser.*can read the bot's tables"):
        async with open_runtime(_settings(demo_db, tools_sql_dsn=demo_db)):
            pass
    unsafe = _settings(demo_db, tools_sql_dsn=demo_db, tools_sql_allow_unsafe=True)
    async with open_runtime(unsafe) as runtime:
        assert runtime.service is not None


def test_reader_dsn_swaps_the_user_and_drops_the_password() -> None:
    assert reader_dsn("postgresql://bot:s3cret@db.example:5432/whytree?sslmode=require") == (
        f"postgresql://{READER_ROLE}@db.example:5432/whytree?sslmode=require"
    )
    assert reader_dsn("postgresql://postgres:@/postgres?host=/tmp/x") == (
        f"postgresql://{READER_ROLE}@/postgres?host=/tmp/x"
    )
    assert reader_dsn("host=/tmp dbname=x") is None
