"""The lab's load generator: a few requests a second to the web service, for at most
`--duration-s` seconds (bounded in rate and time).

    python -m lab.load --url http://127.0.0.1:PORT --rps 4 --duration-s 21600
"""

from __future__ import annotations

import argparse
import asyncio
import time

import aiohttp

_IN_FLIGHT = 20  # requests at most in flight


async def run(url: str, rps: float, duration_s: float) -> None:
    end = time.monotonic() + duration_s
    timeout = aiohttp.ClientTimeout(total=10)
    paths = ("/checkout", "/items", "/checkout", "/healthz")
    async with aiohttp.ClientSession(timeout=timeout) as session:

        async def one(path: str) -> None:
            try:
                async with session.get(url + path) as response:
                    await response.read()
            except (TimeoutError, aiohttp.ClientError, OSError):
                pass

        tasks: set[asyncio.Task[None]] = set()
        i = 0
        while time.monotonic() < end:
            if len(tasks) < _IN_FLIGHT:
                task = asyncio.create_task(one(paths[i % len(paths)]))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            i += 1
            await asyncio.sleep(1 / rps)


def main() -> None:
    parser = argparse.ArgumentParser(prog="lab.load")
    parser.add_argument("--url", required=True)
    parser.add_argument("--rps", type=float, default=4.0)
    parser.add_argument("--duration-s", type=float, default=6 * 3600)
    args = parser.parse_args()
    asyncio.run(run(args.url, min(args.rps, 50.0), args.duration_s))


if __name__ == "__main__":
    main()
