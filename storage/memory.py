"""Long-term memory in PostgreSQL: the ``memories`` table (migrations/006_memory.sql).

Retrieval first takes the owner's slice (user, chat, project) newest first through
the btree index ``memories_owner_time``, at most `search_window` rows, and ranks
only that slice: its cost depends on one user's memory, never on the other users'
rows. The query is the OR of the question's Russian and English lexemes (so
partial overlap and inflected forms match: "соты"/"соте" -> "сот"); the tsquery is
computed once (a MATERIALIZED CTE), not per row.
"""

from __future__ import annotations

import builtins
from typing import Any

import asyncpg

from reasoning_core import DEFAULT_PROJECT, MemoryEntry
from storage.errors import translated

#: How many of the owner's newest entries retrieval ranks; older ones age out by TTL.
DEFAULT_SEARCH_WINDOW = 2000

_COLUMNS = """id, user_id, chat_id, project, goal_summary, outcome_summary, strategy,
              confidence, tree_id, parameters, created_at"""

_NEWEST = "ORDER BY created_at DESC, id DESC"

# plainto_tsquery ANDs its lexemes; " & " only ever appears as that operator (lexemes
# hold no spaces), so replacing it gives "any of these words". NULL: no lexemes.
_OR_QUERY = """nullif(replace(plainto_tsquery('{cfg}', {query})::text, ' & ', ' | '), '')"""


def search_sql(*, user: str, chat: str, project: str, query: str, top_k: str, window: str) -> str:
    """The owner's `top_k` entries best matching `query`, ranked (a ``rank`` column),
    with each value an SQL expression (a placeholder): the turn context
    (storage/exchanges.py) runs the same search inside its own statement."""
    owner = f"user_id = {user} AND chat_id = {chat} AND project = {project}"
    russian = _OR_QUERY.format(cfg="russian", query=query)
    english = _OR_QUERY.format(cfg="english", query=query)
    return f"""
WITH q AS MATERIALIZED (
    SELECT nullif(concat_ws(' | ', {russian}, {english}), '')::tsquery AS tsq
), mine AS MATERIALIZED (
    SELECT {_COLUMNS}, search FROM memories WHERE {owner} {_NEWEST} LIMIT {window}
)
SELECT {_COLUMNS},
       CASE WHEN q.tsq IS NULL THEN 0 ELSE ts_rank(mine.search, q.tsq) END AS rank
FROM mine CROSS JOIN q
WHERE q.tsq IS NULL OR mine.search @@ q.tsq
ORDER BY rank DESC, created_at DESC, id DESC
LIMIT {top_k}
"""


_OWNER = "user_id = $1 AND chat_id = $2 AND project = $3"
_SEARCH = search_sql(user="$1", chat="$2", project="$3", query="$4", top_k="$5", window="$6")


def memory_entry(row: asyncpg.Record | dict[str, Any]) -> MemoryEntry:
    """An entry from a row of `search_sql` (or of its JSON)."""
    data = dict(row)
    data.pop("rank", None)
    data["parameters"] = {str(k): str(v) for k, v in (data["parameters"] or {}).items()}
    return MemoryEntry(**data)


class PgMemoryStore:
    """`MemoryStore` on the ``memories`` table."""

    def __init__(
        self, pool: asyncpg.Pool[Any], *, search_window: int = DEFAULT_SEARCH_WINDOW
    ) -> None:
        self._pool = pool
        self._window = search_window

    @translated("remembering an answer")
    async def add(self, entry: MemoryEntry) -> MemoryEntry:
        """Store an entry; returns it with id and created_at. Unknown user -> NotFoundError."""
        e = entry
        row = await self._pool.fetchrow(
            f"""INSERT INTO memories (user_id, chat_id, project, goal_summary, outcome_summary,
                                      strategy, confidence, tree_id, parameters, created_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, coalesce($10, now()))
                RETURNING {_COLUMNS}""",
            e.user_id,
            e.chat_id,
            e.project,
            e.goal_summary,
            e.outcome_summary,
            e.strategy,
            e.confidence,
            e.tree_id,
            e.parameters,
            e.created_at,
        )
        assert row is not None  # INSERT ... RETURNING returns the row
        return memory_entry(row)

    @translated("searching memory")
    async def search(
        self, *, user_id: int, chat_id: int, project: str, query: str, top_k: int = 3
    ) -> builtins.list[MemoryEntry]:
        """The owner's entries best matching `query`: full-text rank, then newest.

        A query without searchable words (empty, punctuation, only stop words)
        returns the newest entries.
        """
        rows = await self._pool.fetch(
            _SEARCH, user_id, chat_id, project, query, max(top_k, 0), self._window
        )
        return [memory_entry(r) for r in rows]

    async def recent(
        self, *, user_id: int, chat_id: int, project: str, limit: int = 3
    ) -> builtins.list[MemoryEntry]:
        """The owner's newest entries, newest first."""
        return await self.list(user_id=user_id, chat_id=chat_id, project=project, limit=limit)

    @translated("listing memory")
    async def list(
        self, *, user_id: int, chat_id: int, project: str, limit: int = 20, offset: int = 0
    ) -> builtins.list[MemoryEntry]:
        """A page of the owner's entries, newest first."""
        rows = await self._pool.fetch(
            f"SELECT {_COLUMNS} FROM memories WHERE {_OWNER} {_NEWEST} LIMIT $4 OFFSET $5",
            user_id,
            chat_id,
            project,
            max(limit, 0),
            max(offset, 0),
        )
        return [memory_entry(r) for r in rows]

    @translated("counting memory")
    async def count(self, *, user_id: int, chat_id: int, project: str) -> int:
        total: int = await self._pool.fetchval(
            f"SELECT count(*) FROM memories WHERE {_OWNER}", user_id, chat_id, project
        )
        return total

    @translated("deleting a memory entry")
    async def delete(self, *, user_id: int, entry_id: int) -> bool:
        """Delete one entry if `user_id` owns it; another user's id deletes nothing."""
        deleted = await self._pool.fetchval(
            "DELETE FROM memories WHERE id = $1 AND user_id = $2 RETURNING id", entry_id, user_id
        )
        return deleted is not None

    @translated("forgetting memory")
    async def forget_all(self, *, user_id: int, chat_id: int, project: str) -> int:
        """Delete every entry of the owner in this chat and project; returns how many."""
        status = await self._pool.execute(
            f"DELETE FROM memories WHERE {_OWNER}", user_id, chat_id, project
        )
        return _affected(status)

    @translated("purging old memory")
    async def purge_older_than(self, days: int) -> int:
        """Delete entries older than `days` days (MEMORY_TTL_DAYS); returns how many."""
        status = await self._pool.execute(
            "DELETE FROM memories WHERE created_at < now() - make_interval(days => $1)",
            max(days, 0),
        )
        return _affected(status)


def _affected(status: str) -> int:
    """Rows affected, from a command tag such as "DELETE 3"."""
    return int(status.rsplit(" ", 1)[-1])


class PgProjectStore:
    """`ProjectStore` on the ``user_projects`` table; no row means "default"."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("reading the current project")
    async def get(self, *, user_id: int, chat_id: int) -> str:
        project: str | None = await self._pool.fetchval(
            "SELECT project FROM user_projects WHERE user_id = $1 AND chat_id = $2",
            user_id,
            chat_id,
        )
        return project or DEFAULT_PROJECT

    @translated("setting the current project")
    async def set(self, *, user_id: int, chat_id: int, project: str) -> None:
        """Set (or reset, with "default") the project; the user must exist."""
        await self._pool.execute(
            """INSERT INTO user_projects (user_id, chat_id, project) VALUES ($1, $2, $3)
               ON CONFLICT (user_id, chat_id)
               DO UPDATE SET project = EXCLUDED.project, updated_at = now()""",
            user_id,
            chat_id,
            project,
        )
