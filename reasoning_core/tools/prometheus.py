"""The `prometheus` tool: instant and range PromQL queries (PROMETHEUS_URL).

Results are bounded twice: at most `max_series` series, and at most
`max_samples` samples in all (range queries keep each series' most recent
points). Either cut is reported in `truncation_note`. Prometheus' own errors
(`"status": "error"`), HTTP failures and timeouts come back as ``ok=False``
with a message naming what went wrong.
"""

from __future__ import annotations

import math
import time
from datetime import datetime
from typing import Any

import aiohttp

from reasoning_core.errors import CatalogueError
from reasoning_core.tools.base import ToolErrorKind, ToolRequest, ToolResult

#: Points a range query asks for when the request gives no step.
DEFAULT_POINTS = 250
#: Most points per series a range query may ask for (Prometheus' own limit is 11,000).
MAX_POINTS = 11_000


class PrometheusTool:
    """PromQL against Prometheus' HTTP API; implements the `Tool` port."""

    name = "prometheus"

    def __init__(
        self,
        base_url: str,
        *,
        timeout_sec: float = 10.0,
        max_series: int = 50,
        max_samples: int = 5000,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._timeout = timeout_sec
        self._max_series = max_series
        self._max_samples = max_samples

    async def run(self, request: ToolRequest) -> ToolResult:
        """Instant query, or a range query when `start` and `end` are given."""
        refused = _refusal(request)
        if refused:
            return ToolResult.failure(self.name, "syntax", refused)
        timeout = request.timeout_sec or self._timeout
        path, params = _endpoint(request, timeout)
        started = time.perf_counter()
        try:
            payload, status = await self._get(path, params, timeout)
        except TimeoutError:
            return self._failed(
                "timeout", f"Prometheus did not answer within {timeout:g} s", started
            )
        except aiohttp.ClientError as e:
            return self._failed("unavailable", f"Prometheus could not be reached: {e}", started)
        if not isinstance(payload, dict):
            return self._failed(
                "failed", f"Prometheus answered HTTP {status} without JSON", started
            )
        if payload.get("status") != "success":
            kind: ToolErrorKind = "syntax" if payload.get("errorType") == "bad_data" else "failed"
            if payload.get("errorType") in {"timeout", "canceled"}:
                kind = "timeout"
            reason = payload.get("error") or f"HTTP {status}"
            error = (
                f"Prometheus rejected the query ({payload.get('errorType', 'error')}): {reason}"
            )
            return self._failed(kind, error, started)
        return self._result(payload, started)

    async def metric_names(self) -> list[str]:
        """Every metric name Prometheus has (``/api/v1/label/__name__/values``)."""
        data = await self._api("/api/v1/label/__name__/values", {})
        return [str(name) for name in data] if isinstance(data, list) else []

    async def metric_types(self) -> dict[str, str]:
        """Metric family -> type (counter, gauge, ...) from ``/api/v1/metadata``; empty for
        series that were never scraped (TSDB blocks carry no metadata)."""
        data = await self._api("/api/v1/metadata", {})
        types: dict[str, str] = {}
        for name, entries in (data or {}).items() if isinstance(data, dict) else ():
            kinds = {str(e.get("type")) for e in entries if isinstance(e, dict)}
            if len(kinds) == 1:  # targets disagreeing say nothing
                types[str(name)] = kinds.pop()
        return types

    async def label_names(self, metric: str) -> list[str]:
        """The label names the series of one metric carry (``/api/v1/labels?match[]=``)."""
        data = await self._api("/api/v1/labels", {"match[]": f'{{__name__="{metric}"}}'})
        return [str(name) for name in data] if isinstance(data, list) else []

    async def active_targets(self) -> list[dict[str, Any]]:
        """The scrape targets as Prometheus last scraped them (``/api/v1/targets``, active
        ones): labels, health, lastError, lastScrape, lastScrapeDuration, scrapeUrl."""
        data = await self._api("/api/v1/targets", {"state": "active"})
        found = data.get("activeTargets") if isinstance(data, dict) else None
        return [t for t in found if isinstance(t, dict)] if isinstance(found, list) else []

    async def _api(self, path: str, params: dict[str, str]) -> Any:
        """The `data` of one metadata endpoint; `CatalogueError` naming what went wrong."""
        try:
            payload, status = await self._get(path, params, self._timeout)
        except TimeoutError as e:
            raise CatalogueError(f"Prometheus did not answer within {self._timeout:g} s") from e
        except aiohttp.ClientError as e:
            raise CatalogueError(f"Prometheus could not be reached: {e}") from e
        if not isinstance(payload, dict) or payload.get("status") != "success":
            reason = payload.get("error") if isinstance(payload, dict) else None
            raise CatalogueError(f"Prometheus answered {path} with HTTP {status}: {reason or '?'}")
        return payload.get("data")

    async def _get(
        self, path: str, params: dict[str, str], limit_sec: float
    ) -> tuple[object, int]:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=limit_sec)) as session,
            session.get(self._base + path, params=params, allow_redirects=False) as response,
        ):
            try:
                payload: object = await response.json(content_type=None)
            except ValueError:
                payload = None
            return payload, response.status

    def _result(self, payload: dict[str, Any], started: float) -> ToolResult:
        body = payload.get("data") or {}
        result_type = str(body.get("resultType", ""))
        rows = _rows(result_type, body.get("result"))
        total_series = len(rows)
        total_samples = sum(len(r.get("values", ())) or 1 for r in rows)
        rows, notes = self._bound(rows)
        data: dict[str, Any] = {
            "result_type": result_type,
            "series": total_series,
            "samples": total_samples,
        }
        if payload.get("warnings"):
            data["warnings"] = payload["warnings"]
        return ToolResult(
            tool=self.name,
            ok=True,
            rows=rows,
            data=data,
            row_count=len(rows),
            truncated=bool(notes),
            truncation_note="; ".join(notes) or None,
            elapsed_ms=_ms(started),
        )

    def _bound(self, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
        notes: list[str] = []
        if len(rows) > self._max_series:
            notes.append(f"only the first {self._max_series} of {len(rows)} series kept")
            rows = rows[: self._max_series]
        samples = sum(len(r.get("values", ())) for r in rows)
        if samples > self._max_samples:
            per_series = max(1, self._max_samples // max(1, len(rows)))
            notes.append(
                f"{samples} samples cut to at most {per_series} per series (the most recent kept)"
            )
            rows = [
                {**r, "values": r["values"][-per_series:]} if "values" in r else r for r in rows
            ]
        return rows, notes

    def _failed(self, kind: ToolErrorKind, message: str, started: float) -> ToolResult:
        return ToolResult.failure(self.name, kind, message, elapsed_ms=_ms(started))


def _endpoint(request: ToolRequest, timeout: float) -> tuple[str, dict[str, str]]:
    params = {"query": request.query or "", "timeout": f"{max(1, int(timeout))}s"}
    if request.start and request.end:
        span = max(1.0, (request.end - request.start).total_seconds())
        step = request.step_sec or max(1.0, math.ceil(span / DEFAULT_POINTS))
        params.update(start=_ts(request.start), end=_ts(request.end), step=f"{step:g}")
        return "/api/v1/query_range", params
    if request.time:
        params["time"] = _ts(request.time)
    return "/api/v1/query", params


def _refusal(request: ToolRequest) -> str | None:
    """Why a request is refused before it is sent (no query; too long a range for its step,
    or a bad range), or None."""
    if not request.query:
        return "the prometheus tool needs a query"
    if not (request.start and request.end):
        return None
    span = (request.end - request.start).total_seconds()
    if span <= 0:
        return "the range query ends before it starts"
    if request.step_sec is not None and request.step_sec <= 0:
        return "the range query's step must be positive"
    step = request.step_sec or max(1.0, math.ceil(span / DEFAULT_POINTS))
    points = span / step + 1
    if points > MAX_POINTS:
        return (
            f"the range ({span / 3600:g} h) is too long for a {step:g} s step: "
            f"{points:.0f} points per series, at most {MAX_POINTS} — use a larger step "
            "or a shorter range"
        )
    return None


def _rows(result_type: str, result: Any) -> list[dict[str, Any]]:
    if result_type in {"scalar", "string"} and isinstance(result, list) and len(result) == 2:  # noqa: PLR2004
        return [{"ts": float(result[0]), "value": _value(result[1])}]
    rows: list[dict[str, Any]] = []
    for series in result or []:
        row: dict[str, Any] = {"metric": series.get("metric", {})}
        if "values" in series:
            row["values"] = [[float(t), _value(v)] for t, v in series["values"]]
        elif "value" in series:
            row["ts"] = float(series["value"][0])
            row["value"] = _value(series["value"][1])
        rows.append(row)
    return rows


def _value(raw: Any) -> float | str | None:
    """Prometheus sends numbers as text; NaN and infinities become None."""
    try:
        number = float(raw)
    except (TypeError, ValueError):
        return None if raw is None else str(raw)
    return number if math.isfinite(number) else None


def _ts(moment: datetime) -> str:
    return f"{moment.timestamp():.3f}"


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
