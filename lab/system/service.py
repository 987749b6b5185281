"""One service of the system lab's shop (lab/system/topology.py): answers its routes, does
its own work (a PostgreSQL statement, a Redis command or some arithmetic), calls the
services its route calls, and exports the requests it answered and the calls it made in
Istio's names and labels (lab/system/mesh.py) on /metrics.

    python -m lab.system.service --name NAME --port PORT --peers JSON [--dsn DSN] [--redis URL]
        [--control FILE]

`--peers`: the running services' base URLs by name; a call to a service that is not
running is left out. A failed call makes the answer 502; a failed store, 500 — each logged
with its error; every request goes to the access log (the combined format). `--control`:
the service's fault switch (lab/system/control.py): a delay on its inbound or outbound
path, connection resets, its file descriptors exhausted, a release that raises or is slow,
a child (stress-ng, a leak, the disk filler) in its cgroups.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import socket
import struct
import time
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import redis.asyncio as aioredis
import redis.exceptions
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, Gauge, generate_latest

from lab import logs
from lab.system.control import POLL_S, Control, limit_fds
from lab.system.mesh import SOURCE_HEADER, Mesh
from lab.system.topology import Service, by_name

log = logging.getLogger("shop")
ACCESS_FORMAT = '%a - - %t "%r" %s %b "%{Referer}i" "%{User-Agent}i"'
_CALL_TIMEOUT = aiohttp.ClientTimeout(total=5)
_OK = 200
_VERSION = "v1"


def line_price(line: dict[str, Any]) -> float:
    """A line's price; the bad release reads a field its lines no longer carry."""
    return float(line["amount"]) * float(line["currency_rate"])


class Shop:
    """The service's state: its mesh metrics, its store client, its HTTP client and its
    fault switch."""

    def __init__(
        self, service: Service, peers: dict[str, str], control: Path | None = None
    ) -> None:
        self.service = service
        self.peers = peers
        self.mesh = Mesh(service.name)
        self.build = Gauge(
            "app_build_info", "The release running", ["version"], registry=self.mesh.registry
        )
        self.build.labels(_VERSION).set(1)
        self.control = Control(control)
        self.pg: asyncpg.Pool[Any] | None = None
        self.redis: aioredis.Redis | None = None
        self.http: aiohttp.ClientSession | None = None

    def poll_control(self) -> None:
        before = self.control.now.release
        self.control.poll()
        after = self.control.now.release
        if after != before:
            self.build.clear()
            self.build.labels(after or _VERSION).set(1)

    async def release_work(self) -> None:
        """What the release running adds: a slow path, or an exception."""
        switch = self.control.now
        if switch.kind == "slow" and switch.slow_ms:
            await asyncio.sleep(switch.slow_ms / 1000)
        elif switch.kind == "exception":
            line_price({"amount": 1})  # KeyError: 'currency_rate', logged with its traceback

    async def own_work(self) -> None:
        await self.release_work()
        if self.service.store == "postgres" and self.pg is not None:
            if self.service.name == "stock":
                await self.pg.execute("UPDATE stock SET sold = sold + 1 WHERE id = 1")
            else:
                await self.pg.fetch("SELECT id, name FROM products ORDER BY id LIMIT 10")
        elif self.service.store == "redis" and self.redis is not None:
            await self.redis.incr("cart:items")
        if self.service.work_ms:
            end = time.perf_counter() + self.service.work_ms / 1000
            while time.perf_counter() < end:
                pass

    async def call(self, service: str, path: str) -> int:
        assert self.http is not None
        started = time.perf_counter()
        try:
            if delay := self.control.now.outbound_delay_s():
                await asyncio.sleep(delay)
            async with self.http.get(
                self.peers[service] + path, headers={SOURCE_HEADER: self.service.name}
            ) as response:
                await response.read()
                code = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as e:
            log.error("call to %s%s failed: %s", service, path, e)
            code = 0
        self.mesh.called(service, code, time.perf_counter() - started)
        return code

    async def handle(self, request: web.Request) -> web.StreamResponse:
        switch = self.control.now
        if switch.loss and random.random() < switch.loss:
            _reset(request)
            raise ConnectionResetError("reset by the fault")  # aiohttp drops the request
        if delay := switch.inbound_delay_s():
            await asyncio.sleep(delay)  # the request reaches the service late
        started = time.perf_counter()
        code = _OK
        try:
            await self.own_work()
            for call in self.service.routes[request.path]:
                if call.service in self.peers and await self.call(call.service, call.path) != _OK:
                    code = 502
        except (asyncpg.PostgresError, OSError, redis.exceptions.RedisError) as e:
            log.error("%s %s: %s: %s", request.method, request.path, type(e).__name__, e)
            code = 500
        except (KeyError, ValueError, TypeError):
            log.exception("%s %s failed", request.method, request.path)
            code = 500
        self.mesh.answered(request.headers.get(SOURCE_HEADER), code, time.perf_counter() - started)
        if delay := self.control.now.outbound_delay_s():
            await asyncio.sleep(delay)  # the answer leaves late
        return web.Response(status=code, text="ok\n" if code == _OK else "failed\n")

    async def metrics(self, _request: web.Request) -> web.Response:
        body = generate_latest(self.mesh.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


def _reset(request: web.Request) -> None:
    """Close the request's connection with a TCP reset (SO_LINGER 0), no answer."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


async def _watch(shop: Shop) -> None:
    while True:
        try:
            shop.poll_control()
        except Exception:
            log.exception("the fault switch failed")
        await asyncio.sleep(POLL_S)


async def serve(args: argparse.Namespace) -> None:
    control = Path(args.control) if args.control else None
    shop = Shop(by_name(args.name), json.loads(args.peers), control)
    if args.dsn:
        shop.pg = await asyncpg.create_pool(args.dsn, min_size=1, max_size=4)
    if args.redis:
        shop.redis = aioredis.Redis.from_url(args.redis)
    # a connection per call, as nginx's proxy_pass opens one per request: a callee out of
    # file descriptors cannot take new ones (a pooled connection would hide it)
    shop.http = aiohttp.ClientSession(
        timeout=_CALL_TIMEOUT, connector=aiohttp.TCPConnector(force_close=True)
    )
    app = web.Application()
    app.router.add_get("/metrics", shop.metrics)
    app.router.add_get("/healthz", lambda _r: _healthz())
    for path in shop.service.routes:
        app.router.add_get(path, shop.handle)
    runner = web.AppRunner(
        app, access_log=logging.getLogger("access"), access_log_format=ACCESS_FORMAT
    )
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", args.port).start()
    watch = asyncio.create_task(_watch(shop))
    try:
        await asyncio.Event().wait()
    finally:
        watch.cancel()
        shop.control.stop()
        await runner.cleanup()
        await shop.http.close()


async def _healthz() -> web.Response:
    return web.Response(text="ok\n")


def main() -> None:
    parser = argparse.ArgumentParser(prog="lab.system.service")
    parser.add_argument("--name", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--peers", default="{}")
    parser.add_argument("--dsn", default=None)
    parser.add_argument("--redis", default=None)
    parser.add_argument("--control", default=None, help="the fault switch's file")
    args = parser.parse_args()
    logs.setup("shop")  # Python logging's default time, in UTC, as the lab's programs log
    limit_fds()
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
