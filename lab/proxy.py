"""A TCP proxy that delays every chunk by the milliseconds written in a file (the lab's
"slow path to the database": these kernels lack netem).

    python -m lab.proxy --listen PORT --target HOST:PORT --delay-file FILE
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from pathlib import Path

from lab import logs

log = logging.getLogger("db-proxy")


class _Delay:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.ms = 0.0
        self.read_at = 0.0

    def now(self) -> float:
        loop = asyncio.get_running_loop()
        if loop.time() - self.read_at > 1.0:
            self.read_at = loop.time()
            try:
                self.ms = max(0.0, min(float(self.path.read_text().strip() or 0), 10_000.0))
            except (OSError, ValueError):
                self.ms = 0.0
        return self.ms / 1000


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: _Delay) -> None:
    try:
        while data := await reader.read(65536):
            if (seconds := delay.now()) > 0:
                await asyncio.sleep(seconds)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def serve(listen: int, host: str, port: int, delay: _Delay) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(host, port)
        except OSError as e:
            log.error("upstream %s:%s unreachable: %s", host, port, e.strerror or e)
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer, delay), _pipe(up_reader, writer, delay))

    server = await asyncio.start_server(handle, "127.0.0.1", listen)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(prog="lab.proxy")
    parser.add_argument("--listen", type=int, required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--delay-file", type=Path, required=True)
    args = parser.parse_args()
    host, _, port = args.target.rpartition(":")
    logs.setup("db-proxy")
    asyncio.run(serve(args.listen, host, int(port), _Delay(args.delay_file)))


if __name__ == "__main__":
    main()
