"""The lab's web service: a small shop API instrumented with prometheus_client that calls
the lab's PostgreSQL (through the delaying proxy) on every `/checkout`.

    python -m lab.service --port PORT --dsn DSN --release-file FILE

`/checkout` updates one stock row (the row the lock-contention fault holds); `/items`
reads; `/healthz` answers without the database. The release file says which version
runs: "bad" makes `/checkout` raise a real exception, logged with its traceback, and answer
500 (the bad-release fault); "slow" makes every `/checkout` recount the stock with a slow
query of its own before the update, as a release that added an expensive query does.
Requests go to an access log in the combined format, failed database calls to the log with
their error (lab/logs.py).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

import asyncpg
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest

from lab import logs

log = logging.getLogger("shop")
#: The combined log format (aiohttp's names): client, time, request, status, size, agent.
ACCESS_FORMAT = '%a - - %t "%r" %s %b "%{Referer}i" "%{User-Agent}i"'

REQUESTS = Counter("http_requests_total", "HTTP requests answered", ["method", "route", "status"])
LATENCY = Histogram(
    "http_request_duration_seconds",
    "HTTP request latency",
    ["method", "route"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
DB_ERRORS = Counter("app_db_errors_total", "Database calls that failed", ["kind"])
BUILD = Gauge("app_build_info", "The version running", ["version"])


#: The version each release file's word stands for.
_VERSIONS = {"bad": "v2-bad", "slow": "v3"}
#: The slow release's extra query: 1.2 s in PostgreSQL on every /checkout, as a query that
#: reads a cold table takes; a CPU-bound one at two checkouts a second either stayed under the
#: latency alert or saturated the lab's two cores into statement timeouts.
_RECOUNT = "SELECT count(*) FROM stock, pg_sleep(1.2)"


def _release(path: Path) -> str:
    try:
        return path.read_text().strip() or "v1"
    except OSError:
        return "v1"


def line_items(order: dict[str, Any]) -> list[tuple[str, int]]:
    """The order's lines; the bad release reads a field its orders no longer carry."""
    return [(order["sku"], int(order.get("qty", 1)))]


def build_app(dsn: str, release_file: Path) -> web.Application:  # noqa: C901, PLR0915
    version = {"now": ""}

    def current() -> str:
        name = _release(release_file)
        if name != version["now"]:
            BUILD.clear()
            BUILD.labels(_VERSIONS.get(name, "v1")).set(1)
            version["now"] = name
        return name

    async def query(sql: str) -> object:
        try:
            conn = await asyncpg.connect(dsn, timeout=5)
        except (TimeoutError, OSError, asyncpg.PostgresError) as e:
            DB_ERRORS.labels("connect").inc()
            log.error("database connect failed: %s: %s", type(e).__name__, e)
            raise web.HTTPServiceUnavailable(
                text=f"database unavailable: {type(e).__name__}"
            ) from e
        try:
            await conn.execute("SET statement_timeout = '4s'")
            return await conn.fetchval(sql)
        except (TimeoutError, asyncpg.PostgresError) as e:
            DB_ERRORS.labels("query").inc()
            log.error("database query failed: %s: %s", type(e).__name__, e)
            raise web.HTTPServiceUnavailable(text=f"database error: {type(e).__name__}") from e
        finally:
            await conn.close()

    async def checkout(request: web.Request) -> web.Response:
        if current() == "bad":
            try:
                line_items({"item": 1, "qty": 1})  # v2 sends "item": the field was renamed
            except KeyError as e:
                log.exception("checkout failed")
                raise web.HTTPInternalServerError(text="checkout failed") from e
        if current() == "slow":
            await query(_RECOUNT)
        n = await query("UPDATE stock SET sold = sold + 1 WHERE id = 1 RETURNING sold")
        return web.json_response({"sold": n})

    async def items(request: web.Request) -> web.Response:
        current()
        n = await query("SELECT count(*) FROM stock")
        return web.json_response({"items": n})

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    @web.middleware
    async def measure(request: web.Request, handler: object) -> web.StreamResponse:
        route = request.path if request.path in ("/checkout", "/items", "/healthz") else "other"
        if request.path == "/metrics":
            return await handler(request)  # type: ignore[operator,no-any-return]
        start = time.monotonic()
        status = 500
        try:
            response: web.StreamResponse = await handler(request)  # type: ignore[operator]
            status = response.status
            return response
        except web.HTTPException as e:
            status = e.status
            raise
        finally:
            REQUESTS.labels(request.method, route, str(status)).inc()
            LATENCY.labels(request.method, route).observe(time.monotonic() - start)

    app = web.Application(middlewares=[measure])
    app.add_routes(
        [
            web.get("/checkout", checkout),
            web.post("/checkout", checkout),
            web.get("/items", items),
            web.get("/healthz", healthz),
            web.get("/metrics", metrics),
        ]
    )
    return app


def main() -> None:
    parser = argparse.ArgumentParser(prog="lab.service")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--release-file", type=Path, required=True)
    args = parser.parse_args()
    logs.setup("shop")
    web.run_app(
        build_app(args.dsn, args.release_file),
        host="127.0.0.1",
        port=args.port,
        print=None,
        access_log_format=ACCESS_FORMAT,
    )


if __name__ == "__main__":
    main()
