"""HTTP API clients: their keys and their asynchronous questions."""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel

from reasoning_core.models import Answer

# Implemented in storage/api_keys.py (PgApiKeyStore, PgApiJobStore); driven by bot/http_api/.

ApiJobStatus = Literal["running", "done", "failed"]


class ApiKey(BaseModel):
    """A client of the HTTP API. The key itself is never stored, only its SHA-256."""

    id: int
    name: str
    #: Whose access rules (ban, allowlist) and daily token budget apply to the key's calls.
    user_id: int
    rate_limit_per_min: int = 60
    created_by: int | None = None
    created_at: datetime | None = None
    revoked_at: datetime | None = None


class ApiKeyStore(Protocol):
    """The ``api_keys`` table; raises `StoreError`."""

    async def create(
        self,
        *,
        name: str,
        key_hash: str,
        user_id: int,
        rate_limit_per_min: int,
        created_by: int | None,
    ) -> ApiKey | None:
        """A new key; None when the name is taken."""
        ...

    async def by_hash(self, key_hash: str) -> ApiKey | None:
        """The live (not revoked) key with this hash."""
        ...

    async def revoke(self, name: str) -> bool:
        """Revoke a live key by name; False when there is none."""
        ...

    async def list(self) -> builtins.list[ApiKey]: ...


class ApiJob(BaseModel):
    """One asynchronous question: running -> done | failed, with the Answer when done."""

    id: str
    key_id: int
    question: str
    status: ApiJobStatus = "running"
    progress: str = ""
    answer: Answer | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class ApiJobStore(Protocol):
    """The ``api_jobs`` table; raises `StoreError`."""

    async def create(self, job_id: str, *, key_id: int, question: str) -> ApiJob: ...

    async def progress(self, job_id: str, text: str) -> None: ...

    async def finish(
        self, job_id: str, *, status: ApiJobStatus, answer: Answer | None
    ) -> None: ...

    async def get(self, job_id: str) -> ApiJob | None: ...
