"""A throwaway embedded PostgreSQL for benchmarks: no user data is ever touched."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from storage.embedded import EmbeddedPostgres


@asynccontextmanager
async def scratch_server() -> AsyncIterator[str]:
    """Start a fresh cluster in a temporary directory; yields its DSN; removes it after."""
    with tempfile.TemporaryDirectory(prefix="whytree-bench-") as scratch:
        embedded = EmbeddedPostgres(Path(scratch))
        dsn = await asyncio.to_thread(embedded.start)
        try:
            yield dsn
        finally:
            await asyncio.to_thread(embedded.stop)
