"""The asyncpg connection pool, with driver errors translated to StoreError."""

from __future__ import annotations

import asyncio
import json
from typing import Any, TypeAlias

import asyncpg

from reasoning_core.errors import StoreError

#: A connection from `asyncpg.connect` or one borrowed from a pool.
Connection: TypeAlias = "asyncpg.Connection[Any] | asyncpg.pool.PoolConnectionProxy[Any]"

#: Errors that mean "the server is not there", as opposed to a bad query.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    asyncio.TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,
)


async def _init_connection(conn: asyncpg.Connection[Any]) -> None:
    # JSONB columns come back as Python objects, not strings.
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


async def create_pool(
    dsn: str, *, min_size: int = 1, max_size: int = 10, connect_timeout: float = 10.0
) -> asyncpg.Pool[Any]:
    """Connect; an unreachable server raises StoreError naming DATABASE_URL."""
    try:
        pool: asyncpg.Pool[Any] = await asyncpg.create_pool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            timeout=connect_timeout,
            init=_init_connection,
        )
    except CONNECTION_ERRORS as e:
        raise StoreError(
            f"cannot reach PostgreSQL at DATABASE_URL ({redact_dsn(dsn)}): {e}"
        ) from e
    except asyncpg.PostgresError as e:
        raise StoreError(f"PostgreSQL refused the connection ({redact_dsn(dsn)}): {e}") from e
    return pool


def redact_dsn(dsn: str) -> str:
    """Hide the password in a DSN for logs and messages."""
    scheme, sep, rest = dsn.partition("://")
    if not sep or "@" not in rest:
        return dsn
    creds, _, host = rest.rpartition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in creds else f"{scheme}://{user}@{host}"
