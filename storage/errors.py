"""Driver errors translated once, for every store.

Every public store method runs inside `translate_errors` (directly or through the
`translated` decorator), so nothing above storage ever sees an asyncpg exception:

- the server is unreachable, the connection dropped, the pool is closed, or the
  server is shutting down -> `StoreUnavailableError` saying the database is unreachable;
- a foreign key points at a row that does not exist -> `NotFoundError`;
- any other PostgreSQL error -> `StoreError` with its SQLSTATE.

Messages never contain the DSN (and so never the password): the stores do not know
it, and asyncpg's own messages do not include it.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any, ParamSpec, TypeVar

import asyncpg

from reasoning_core import NotFoundError, StoreError, StoreUnavailableError
from storage.pool import CONNECTION_ERRORS

P = ParamSpec("P")
R = TypeVar("R")

#: The server is going away: for the caller this is the same as unreachable.
_SHUTDOWN_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
)
_UNREACHABLE = CONNECTION_ERRORS + _SHUTDOWN_ERRORS


def unreachable_message(action: str, error: BaseException) -> str:
    """The one wording for "no database", naming the setting to check."""
    return (
        f"the database is unreachable while {action} "
        f"(check DATABASE_URL and that PostgreSQL is running): {type(error).__name__}: {error}"
    )


@asynccontextmanager
async def translate_errors(action: str) -> AsyncIterator[None]:
    """Run a block of driver calls, re-raising driver errors as the reasoning_core tree.

    `action` is a short gerund phrase ("recording an exchange") used in messages.
    Errors that are already `StoreError`s (e.g. a `NotFoundError` raised by the
    store itself) pass through untouched.
    """
    try:
        yield
    except _UNREACHABLE as e:
        raise StoreUnavailableError(unreachable_message(action, e)) from e
    except asyncpg.ForeignKeyViolationError as e:
        raise NotFoundError(f"{action}: a referenced row does not exist ({e.detail or e})") from e
    except asyncpg.PostgresError as e:
        raise StoreError(f"database error while {action} [{e.sqlstate}]: {e}") from e


def translated(
    action: str,
) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Coroutine[Any, Any, R]]]:
    """Decorator form of `translate_errors` for async store methods."""

    def decorate(func: Callable[P, Awaitable[R]]) -> Callable[P, Coroutine[Any, Any, R]]:
        @functools.wraps(func)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            async with translate_errors(action):
                return await func(*args, **kwargs)

        return wrapper

    return decorate
