"""A stand-in for Grafana Loki's query API (`GET /loki/api/v1/query_range`) over real HTTP:
Loki cannot run on these machines (docs/logs.md).

It answers as Loki's documented API does: the LogQL stream selector (label equality
matchers) and a regex line filter (``|~ "..."``), `start`/`end` in Unix nanoseconds,
`limit` (above `max_entries` a 400 as Loki's `max_entries_limit_per_query`), `direction`
(backward: newest first), ``{"status": "success", "data": {"resultType": "streams",
"result": [{"stream": {...}, "values": [["<ns>", "<line>"], ...]}]}}``; errors as plain
text with their status (400 for a parse error, 429 "too many outstanding requests", 5xx).
Failures and latency are scripted; every request is recorded with its headers.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import web

from tests.fakes.serving import LoopbackServer

_SELECTOR = re.compile(r"^\{(?P<matchers>[^}]*)\}\s*(?P<pipeline>.*)$", re.S)
_MATCHER = re.compile(r'\s*([A-Za-z_]\w*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*')
_FILTER = re.compile(r'^\|~\s*(?P<pattern>"(?:[^"\\]|\\.)*")\s*$', re.S)


@dataclass
class FakeLoki:
    """Streams of (ns, line); use as ``async with FakeLoki() as loki``."""

    streams: list[tuple[dict[str, str], list[tuple[int, str]]]] = field(default_factory=list)
    #: Statuses to answer, one per request, before answering normally (429, 500, ...).
    failures: list[int] = field(default_factory=list)
    delay: float = 0.0
    max_entries: int = 5000
    #: Required `Authorization` header value, when set.
    authorization: str | None = None
    requests: list[tuple[dict[str, str], dict[str, str]]] = field(default_factory=list)
    _server: LoopbackServer = field(default_factory=LoopbackServer)

    @property
    def url(self) -> str:
        return self._server.url

    def push(self, labels: dict[str, str], entries: list[tuple[int, str]]) -> None:
        self.streams.append((dict(labels), list(entries)))

    async def _query_range(self, request: web.Request) -> web.Response:
        params = dict(request.query)
        self.requests.append((params, dict(request.headers)))
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.failures:
            status = self.failures.pop(0)
            text = "too many outstanding requests" if status == 429 else "internal error"
            return web.Response(status=status, text=text)
        if self.authorization and request.headers.get("Authorization") != self.authorization:
            return web.Response(status=401, text="no org id")
        try:
            labels, pattern = _parse(params["query"])
            start, end = int(params["start"]), int(params["end"])
            limit = int(params.get("limit", "100"))
        except (KeyError, ValueError) as e:
            return web.Response(status=400, text=f"parse error : {e}")
        if limit > self.max_entries:
            return web.Response(
                status=400,
                text="max entries limit per query exceeded, limit > max_entries_limit_per_query"
                f" ({limit} > {self.max_entries})",
            )
        backward = params.get("direction", "backward").lower() == "backward"
        found: list[tuple[int, dict[str, str], str]] = [
            (ns, stream, line)
            for stream, entries in self.streams
            if all(stream.get(k) == v for k, v in labels.items())
            for ns, line in entries
            if start <= ns < end and (pattern is None or pattern.search(line))
        ]
        found.sort(key=lambda e: e[0], reverse=backward)
        found = found[:limit]
        result: dict[str, dict[str, Any]] = {}
        for ns, stream, line in found:
            key = json.dumps(stream, sort_keys=True)
            result.setdefault(key, {"stream": stream, "values": []})["values"].append(
                [str(ns), line]
            )
        body = {
            "status": "success",
            "data": {"resultType": "streams", "result": list(result.values()), "stats": {}},
        }
        return web.json_response(body)

    async def __aenter__(self) -> FakeLoki:
        app = web.Application()
        app.router.add_get("/loki/api/v1/query_range", self._query_range)
        await self._server.start(app)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._server.stop()


def _parse(query: str) -> tuple[dict[str, str], re.Pattern[str] | None]:
    m = _SELECTOR.match(query.strip())
    if m is None:
        raise ValueError(f"not a stream selector: {query!r}")
    labels = {k: json.loads(f'"{v}"') for k, v in _MATCHER.findall(m.group("matchers"))}
    pipeline = m.group("pipeline").strip()
    if not pipeline:
        return labels, None
    f = _FILTER.match(pipeline)
    if f is None:
        raise ValueError(f"unsupported pipeline {pipeline!r}")
    return labels, re.compile(json.loads(f.group("pattern")))
