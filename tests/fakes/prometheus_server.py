"""A stand-in for Prometheus' HTTP API (/api/v1/query and /api/v1/query_range, and the
metric catalogue discovery reads: /api/v1/label/__name__/values, /api/v1/metadata,
/api/v1/labels) over real HTTP.

Series are scripted per PromQL text as functions of time, so instant and range
queries both answer from the same script; unknown queries return an empty
result, as Prometheus does for a selector that matches nothing. Errors and
latency are injectable; every request is recorded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import web

from tests.fakes.serving import LoopbackServer

ValueAt = Callable[[float], float]


@dataclass
class _Series:
    labels: dict[str, str]
    value_at: ValueAt


@dataclass
class FakePrometheus:
    """Scripted Prometheus; use as ``async with FakePrometheus() as prom``."""

    delay: float = 0.0
    series: dict[str, list[_Series]] = field(default_factory=dict)
    errors: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    #: Metric name -> the label names its series carry (the catalogue's names and labels).
    metrics: dict[str, list[str]] = field(default_factory=dict)
    #: Metric family -> type, as /api/v1/metadata gives it (counter, gauge, ...).
    types: dict[str, str] = field(default_factory=dict)
    _server: LoopbackServer = field(default_factory=LoopbackServer)

    def add(self, query: str, labels: dict[str, str], value_at: ValueAt | float) -> None:
        """One series answering `query`; value_at(unix_time) or a constant."""
        if callable(value_at):
            fn = value_at
        else:
            constant = float(value_at)

            def fn(_t: float) -> float:
                return constant

        self.series.setdefault(query, []).append(_Series(dict(labels), fn))

    def fail(
        self,
        query: str,
        *,
        error_type: str = "bad_data",
        error: str = "parse error",
        status: int = 400,
    ) -> None:
        """Answer `query` with Prometheus' error shape."""
        self.errors[query] = (status, error_type, error)

    @property
    def base_url(self) -> str:
        return self._server.url

    async def __aenter__(self) -> FakePrometheus:
        app = web.Application()
        app.router.add_route("*", "/api/v1/query", self._instant)
        app.router.add_route("*", "/api/v1/query_range", self._range)
        app.router.add_get("/api/v1/label/__name__/values", self._names)
        app.router.add_get("/api/v1/metadata", self._metadata)
        app.router.add_get("/api/v1/labels", self._labels)
        await self._server.start(app)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._server.stop()

    async def _params(self, request: web.Request) -> dict[str, str]:
        params = dict(request.query)
        if request.method == "POST":
            params.update({k: str(v) for k, v in (await request.post()).items()})
        self.requests.append((request.path, params))
        if self.delay:
            await asyncio.sleep(self.delay)
        return params

    def _error(self, query: str) -> web.Response | None:
        if query not in self.errors:
            return None
        status, error_type, error = self.errors[query]
        body = {"status": "error", "errorType": error_type, "error": error}
        return web.json_response(body, status=status)

    async def _instant(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        query = params.get("query", "")
        error = self._error(query)
        if error:
            return error
        at = float(params.get("time") or time.time())
        result = [
            {"metric": s.labels, "value": [at, _text(s.value_at(at))]}
            for s in self.series.get(query, [])
        ]
        return _success("vector", result)

    async def _range(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        query = params.get("query", "")
        error = self._error(query)
        if error:
            return error
        try:
            start, end, step = (float(params[k]) for k in ("start", "end", "step"))
        except (KeyError, ValueError):
            body = {"status": "error", "errorType": "bad_data", "error": "invalid range"}
            return web.json_response(body, status=400)
        times = [start + i * step for i in range(int((end - start) // step) + 1)]
        result = [
            {"metric": s.labels, "values": [[t, _text(s.value_at(t))] for t in times]}
            for s in self.series.get(query, [])
        ]
        return _success("matrix", result)

    async def _names(self, request: web.Request) -> web.Response:
        await self._params(request)
        return web.json_response({"status": "success", "data": sorted(self.metrics)})

    async def _metadata(self, request: web.Request) -> web.Response:
        await self._params(request)
        data = {n: [{"type": kind, "help": "", "unit": ""}] for n, kind in self.types.items()}
        return web.json_response({"status": "success", "data": data})

    async def _labels(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        match = params.get("match[]", "")
        names = {"__name__"}
        for metric, labels in self.metrics.items():
            if match in ("", f'{{__name__="{metric}"}}'):
                names.update(labels)
        return web.json_response({"status": "success", "data": sorted(names)})


def _text(value: float) -> str:
    return repr(float(value)) if value == value else "NaN"  # noqa: PLR0124 - NaN check


def _success(result_type: str, result: list[dict[str, Any]]) -> web.Response:
    return web.json_response(
        {"status": "success", "data": {"resultType": result_type, "result": result}}
    )
