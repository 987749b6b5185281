"""HTTP API clients in PostgreSQL: ``api_keys`` (`ApiKeyStore`), ``api_jobs`` (`ApiJobStore`)."""

from __future__ import annotations

import builtins
from typing import Any

import asyncpg

from reasoning_core import Answer, ApiJob, ApiJobStatus, ApiKey
from storage.errors import translated

_KEY_COLUMNS = "id, name, user_id, rate_limit_per_min, created_by, created_at, revoked_at"
_JOB_COLUMNS = "id, key_id, question, status, progress, answer, created_at, updated_at"


class PgApiKeyStore:
    """`ApiKeyStore` on PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("creating an API key")
    async def create(
        self,
        *,
        name: str,
        key_hash: str,
        user_id: int,
        rate_limit_per_min: int,
        created_by: int | None,
    ) -> ApiKey | None:
        row = await self._pool.fetchrow(
            f"""INSERT INTO api_keys (name, key_hash, user_id, rate_limit_per_min, created_by)
                VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING {_KEY_COLUMNS}""",
            name,
            key_hash,
            user_id,
            rate_limit_per_min,
            created_by,
        )
        return None if row is None else ApiKey.model_validate(dict(row))

    @translated("reading an API key")
    async def by_hash(self, key_hash: str) -> ApiKey | None:
        row = await self._pool.fetchrow(
            f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL",
            key_hash,
        )
        return None if row is None else ApiKey.model_validate(dict(row))

    @translated("revoking an API key")
    async def revoke(self, name: str) -> bool:
        value = await self._pool.fetchval(
            """UPDATE api_keys SET revoked_at = now()
               WHERE name = $1 AND revoked_at IS NULL RETURNING id""",
            name,
        )
        return value is not None

    @translated("listing API keys")
    async def list(self) -> builtins.list[ApiKey]:
        rows = await self._pool.fetch(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY id")
        return [ApiKey.model_validate(dict(r)) for r in rows]


class PgApiJobStore:
    """`ApiJobStore` on PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("creating an API job")
    async def create(self, job_id: str, *, key_id: int, question: str) -> ApiJob:
        row = await self._pool.fetchrow(
            f"""INSERT INTO api_jobs (id, key_id, question) VALUES ($1, $2, $3)
                RETURNING {_JOB_COLUMNS}""",
            job_id,
            key_id,
            question,
        )
        assert row is not None
        return ApiJob.model_validate(dict(row))

    @translated("recording an API job's progress")
    async def progress(self, job_id: str, text: str) -> None:
        await self._pool.execute(
            "UPDATE api_jobs SET progress = $2, updated_at = now() WHERE id = $1",
            job_id,
            text[:500],
        )

    @translated("finishing an API job")
    async def finish(self, job_id: str, *, status: ApiJobStatus, answer: Answer | None) -> None:
        await self._pool.execute(
            """UPDATE api_jobs SET status = $2, answer = $3, updated_at = now()
               WHERE id = $1""",
            job_id,
            status,
            None if answer is None else answer.model_dump(mode="json"),
        )

    @translated("reading an API job")
    async def get(self, job_id: str) -> ApiJob | None:
        row = await self._pool.fetchrow(
            f"SELECT {_JOB_COLUMNS} FROM api_jobs WHERE id = $1", job_id
        )
        return None if row is None else ApiJob.model_validate(dict(row))
