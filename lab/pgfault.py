"""PostgreSQL faults, bounded in time: hold the stock row's lock in a long transaction, or
hold most of the server's connections.

    python -m lab.pgfault lock --dsn DSN --seconds 120
    python -m lab.pgfault connections --dsn DSN --share 0.9 --seconds 120
"""

from __future__ import annotations

import argparse
import asyncio

import asyncpg


async def hold_lock(dsn: str, seconds: float) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.execute("SELECT sold FROM stock WHERE id = 1 FOR UPDATE")
            await asyncio.sleep(seconds)
    finally:
        await conn.close()


async def hold_connections(dsn: str, share: float, seconds: float) -> None:
    first = await asyncpg.connect(dsn)
    limit = int(await first.fetchval("SHOW max_connections"))
    used = int(
        await first.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
        )
    )
    held = [first]  # counted in `used`: hold connections until `share` of the limit is taken
    for _ in range(max(0, int(limit * share) - used)):
        try:
            held.append(await asyncpg.connect(dsn, timeout=5))
        except (TimeoutError, OSError, asyncpg.PostgresError):
            break
    print(f"holding {len(held)} of {limit} connections", flush=True)
    try:
        await asyncio.sleep(seconds)
    finally:
        await asyncio.gather(*(c.close() for c in held), return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="lab.pgfault")
    parser.add_argument("kind", choices=("lock", "connections"))
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--share", type=float, default=0.9)
    args = parser.parse_args()
    seconds = min(args.seconds, 900.0)
    if args.kind == "lock":
        asyncio.run(hold_lock(args.dsn, seconds))
    else:
        asyncio.run(hold_connections(args.dsn, min(args.share, 1.0), seconds))


if __name__ == "__main__":
    main()
