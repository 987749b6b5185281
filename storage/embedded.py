"""An embedded PostgreSQL (pgserver) for machines with no DATABASE_URL.

The cluster lives in the data directory, is started on demand, reused by later
runs (pgserver finds a postmaster that is already running there) and stopped
when the last process that started it exits.
"""

from __future__ import annotations

import fcntl
import logging
import os
import tempfile
from pathlib import Path

from reasoning_core import StoreError

log = logging.getLogger(__name__)


class EmbeddedPostgres:
    """Owns one pgserver cluster in ``data_dir / "pg"``."""

    def __init__(self, data_dir: Path) -> None:
        self.pgdata = data_dir / "pg"
        self._server: object | None = None

    def start(self) -> str:
        """Start (or join) the cluster; returns its DSN (a Unix-socket URI)."""
        # Imported lazily: heavy, and only needed without DATABASE_URL.
        from pgserver.postgres_server import get_server  # noqa: PLC0415

        try:
            self.pgdata.parent.mkdir(parents=True, exist_ok=True)
            _ensure_server_user()
            server = get_server(self.pgdata, cleanup_mode="stop")
        except Exception as e:  # pgserver raises plain exceptions with initdb/pg_ctl output
            raise StoreError(
                f"could not start the embedded PostgreSQL in {self.pgdata}: {e}. "
                "Set DATABASE_URL to use an existing server."
            ) from e
        self._server = server
        dsn: str = server.get_uri()
        log.info("embedded PostgreSQL ready in %s", self.pgdata)
        return dsn

    def stop(self) -> None:
        """Release our handle; the cluster stops when no other process uses it."""
        if self._server is not None:
            self._server.cleanup()  # type: ignore[attr-defined]
            self._server = None


def _ensure_server_user() -> None:
    """As root, pgserver runs PostgreSQL as its own user, created on first use with
    `useradd`. Two processes starting at once on a fresh machine (the test workers) ran
    useradd together and one was left with a uid that no longer existed ("initdb: could
    not look up effective user ID"): the user is made under a lock, once."""
    if os.geteuid() != 0:
        return
    from pgserver.utils import ensure_user_exists  # noqa: PLC0415

    lock = Path(tempfile.gettempdir()) / "whytree-pgserver-user.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        ensure_user_exists("pgserver")
