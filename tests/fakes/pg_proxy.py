"""A TCP proxy in front of the test PostgreSQL that can "stop" and "start" the database.

`stop()` cuts every open connection and refuses new ones, as a stopped server would
(the client sees its connections drop and connects to nothing); `start()` lets
connections through again. The bot under test uses `dsn(database)` instead of the
server's own address.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from types import TracebackType
from urllib.parse import parse_qs, urlsplit, urlunsplit


class PgProxy:
    def __init__(self, server_dsn: str) -> None:
        parts = urlsplit(server_dsn)
        self._parts = parts
        socket_dir = parse_qs(parts.query).get("host", [""])[0]
        self._unix: str | None = None
        if socket_dir.startswith("/"):
            sockets = sorted(Path(socket_dir).glob(".s.PGSQL.[0-9]*"))
            sockets = [s for s in sockets if not s.name.endswith(".lock")]
            self._unix = str(sockets[0]) if sockets else None
        self._target = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._server: asyncio.Server | None = None
        self._streams: set[asyncio.StreamWriter] = set()
        self.down = False
        self.port = 0

    def dsn(self, database_url: str) -> str:
        """`database_url` (same user, same database) through this proxy."""
        parts = urlsplit(database_url)
        user = parts.username or "postgres"
        secret = f":{parts.password}" if parts.password else ""
        netloc = f"{user}{secret}@127.0.0.1:{self.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))

    async def __aenter__(self) -> PgProxy:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def stop(self) -> None:
        """The database is gone: open connections drop, new ones are refused."""
        self.down = True
        for writer in list(self._streams):
            writer.transport.abort()
        self._streams.clear()

    def start(self) -> None:
        self.down = False

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            writer.transport.abort()
            return
        try:
            if self._unix is not None:
                up_reader, up_writer = await asyncio.open_unix_connection(self._unix)
            else:
                up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        self._streams.update((writer, up_writer))
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        self._streams.discard(writer)
        self._streams.discard(up_writer)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.transport.abort()
