"""The asyncpg connection pool, with driver errors translated to StoreError."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from functools import partial
from typing import Any, TypeAlias

import asyncpg

from reasoning_core import StoreError

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


class _NoResetConnection(asyncpg.Connection):
    """A pooled connection returned without asyncpg's reset statement.

    asyncpg sends ``SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL``
    on every release: one more round trip per borrowed connection. This pool's code keeps
    no session state (no advisory locks, LISTEN, cursors outside transactions or session
    SETs; the SQL tool has its own pool and sets its limits per transaction), so there is
    nothing to reset. An open transaction is still rolled back by asyncpg itself.
    """

    def get_reset_query(self) -> str:
        return ""


#: Called with every statement a pooled connection sends (asyncpg's query logger).
QueryObserver = Callable[[asyncpg.connection.LoggedQuery], None]


async def _init_connection(
    conn: asyncpg.Connection[Any], observe: QueryObserver | None = None
) -> None:
    # JSONB columns come back as Python objects, not strings.
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    if observe is not None:
        conn.add_query_logger(observe)


async def create_pool(
    dsn: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    connect_timeout: float = 10.0,
    observe: QueryObserver | None = None,
) -> asyncpg.Pool[Any]:
    """Connect; an unreachable server raises StoreError naming DATABASE_URL.

    `observe` sees every statement sent (tests count the round trips of a question).
    """
    try:
        pool: asyncpg.Pool[Any] = await asyncpg.create_pool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            timeout=connect_timeout,
            init=partial(_init_connection, observe=observe),
            connection_class=_NoResetConnection,
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
