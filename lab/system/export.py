"""A Prometheus window as RCAEval's input: a frame with `time` (Unix seconds) and one
column per `<service>_<metric>` (its README's "Data format"; its datasets' `data.csv`).

Every series the Prometheus holds over the window is a column (its labels but `job`,
`instance` and the one naming the service after a `;`, as `web_http_requests_total;
method=GET,route=/checkout,status=200`), counters as per-second rates (a reset counts from
zero), a histogram as its 90th percentile (`<service>_<family>-p90`, Prometheus's own
`histogram_quantile` over a 30 s rate) instead of its buckets. Beside them, the columns
RCAEval's datasets carry for every service, computed in Prometheus (the lab's `Parts`):
`<service>_cpu`, `<service>_mem` and `<service>_latency` (the 90th percentile: its main.py
renames `_latency-90` to `_latency` and drops `_latency-50`).

Bounded: at most `max_series` series (whole metrics, in name order, a note for the rest),
at most `max_points` values (the step grows to fit), a window of at most 2 h.
"""

from __future__ import annotations

import csv
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from lab.system.parts import Parts, service_name

MAX_SERIES = 3000
MAX_POINTS = 1_500_000
MAX_WINDOW_S = 7200.0
#: Prometheus refuses a range query of more points per series than this.
_MAX_STEPS = 11_000
#: Series fetched per range query (a regex of whole metric names).
_BATCH_SERIES = 400
_COUNTER_SUFFIXES = ("_total", "_count", "_sum")
_HIDDEN_LABELS = ("__name__", "job", "instance")
_TIMEOUT = aiohttp.ClientTimeout(total=60)
#: Below this a float that is a whole number is written as an integer.
_EXACT_INT = 2**53


class ExportError(Exception):
    """The window cannot be exported (Prometheus unreachable, a bad window)."""


@dataclass
class Frame:
    """RCAEval's frame: `times` (Unix seconds, one per step) and its columns' values (None
    where Prometheus had no sample)."""

    times: list[float]
    columns: dict[str, list[float | None]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def services(self) -> list[str]:
        """The services the columns belong to, as RCAEval reads them (before the `_`)."""
        return sorted({name.split("_")[0] for name in self.columns})

    def write_csv(self, path: Path) -> Path:
        """`data.csv` as RCAEval's datasets write it: `time` first."""
        names = sorted(self.columns)
        with path.open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(["time", *names])
            for i, at in enumerate(self.times):
                row = [_number(self.columns[n][i]) for n in names]
                writer.writerow([_number(at), *row])
        return path


def _number(value: float | None) -> str:
    if value is None:
        return ""
    if value == int(value) and abs(value) < _EXACT_INT:
        return str(int(value))
    return repr(value)


async def export_window(
    prometheus_url: str,
    parts: Parts,
    *,
    start: float,
    end: float,
    step: float = 5.0,
    max_series: int = MAX_SERIES,
    max_points: int = MAX_POINTS,
) -> Frame:
    """Every series of the Prometheus at `prometheus_url` from `start` to `end` (Unix
    seconds) as RCAEval's frame."""
    if not end > start or end - start > MAX_WINDOW_S:
        raise ExportError(f"a window of {end - start:.0f} s (0 < window <= {MAX_WINDOW_S:.0f})")
    url = prometheus_url.rstrip("/")
    async with aiohttp.ClientSession(timeout=_TIMEOUT) as http:
        api = _Api(http, url)
        kinds = await api.metadata()
        listed = await api.series('{__name__=~".+"}', start, end)
        chosen, notes = _choose(listed, max_series)
        step = max(step, (end - start) / (_MAX_STEPS - 1))
        n_series = sum(len(sets) for sets in chosen.values())
        step = max(step, (end - start) * n_series / max_points)
        times = [start + i * step for i in range(int((end - start) // step) + 1)]
        frame = Frame(times=times, notes=notes)
        histograms = sorted(
            {
                name.removesuffix("_bucket")
                for name, sets in chosen.items()
                if _is_bucket(name, sets)
            }
        )
        plain = [name for name in chosen if not _is_bucket(name, chosen[name])]
        for batch in _batches(plain, chosen):
            regex = "|".join(re.escape(name) for name in batch)
            for labels, raw in await api.range(f'{{__name__=~"{regex}"}}', times, step):
                name = labels.get("__name__", "")
                values = _rates(raw, step) if _is_counter(name, kinds) else raw
                _add(frame, parts, name, labels, values)
        for family in histograms:
            expr = f"histogram_quantile(0.9, rate({family}_bucket[30s]))"
            for labels, values in await api.range(expr, times, step):
                _add(frame, parts, f"{family}-p90", labels, values)
        for derived in parts.derived:
            for labels, values in await api.range(derived.expr, times, step):
                service = service_name(labels.get(derived.by, "") or "unknown")
                _put(frame, f"{service}_{derived.metric}", values)
    return frame


def _choose(
    listed: Sequence[Mapping[str, str]], max_series: int
) -> tuple[dict[str, list[Mapping[str, str]]], list[str]]:
    """Whole metrics in name order while they fit in `max_series`; a note for the rest."""
    by_name: dict[str, list[Mapping[str, str]]] = {}
    for labels in listed:
        by_name.setdefault(labels.get("__name__", ""), []).append(labels)
    chosen: dict[str, list[Mapping[str, str]]] = {}
    total = 0
    left: list[str] = []
    for name in sorted(by_name):
        if total + len(by_name[name]) > max_series:
            left.append(name)
            continue
        chosen[name] = by_name[name]
        total += len(by_name[name])
    notes = (
        [f"{len(left)} metrics left out past {max_series} series: {', '.join(left[:5])}…"]
        if left
        else []
    )
    return chosen, notes


def _batches(names: list[str], chosen: Mapping[str, list[Any]]) -> list[list[str]]:
    batches: list[list[str]] = []
    size = 0
    for name in names:
        if not batches or size + len(chosen[name]) > _BATCH_SERIES:
            batches.append([])
            size = 0
        batches[-1].append(name)
        size += len(chosen[name])
    return batches


def _is_bucket(name: str, sets: Sequence[Mapping[str, str]]) -> bool:
    return name.endswith("_bucket") and all("le" in labels for labels in sets)


def _is_counter(name: str, kinds: Mapping[str, str]) -> bool:
    """A counter (or a histogram's or summary's `_sum` / `_count`): Prometheus's metadata
    says so, else the name's suffix does (a backfilled TSDB has no metadata)."""
    kind = kinds.get(name)
    if kind == "counter":
        return True
    for suffix in ("_sum", "_count"):
        if name.endswith(suffix) and kinds.get(name.removesuffix(suffix)) in (
            "histogram",
            "summary",
        ):
            return True
    return kind is None and name.endswith(_COUNTER_SUFFIXES)


def _rates(values: list[float | None], step: float) -> list[float | None]:
    """Per-second increase between steps; a counter that fell was reset and counts from 0."""
    out: list[float | None] = [None]
    for before, now in itertools.pairwise(values):
        if before is None or now is None:
            out.append(None)
        else:
            out.append((now - before if now >= before else now) / step)
    return out


def _column(parts: Parts, metric: str, labels: Mapping[str, str]) -> tuple[str, str]:
    """(column name, the same with the instance) for a series."""
    service = parts.service_of(labels)
    named_by = next((label for label in parts.service_labels if labels.get(label)), None)
    rest = {k: v for k, v in sorted(labels.items()) if k not in (*_HIDDEN_LABELS, named_by)}
    base = f"{service}_{metric}"
    name = base + (";" + ",".join(f"{k}={v}" for k, v in rest.items()) if rest else "")
    instance = labels.get("instance", "")
    return name, name + (f";instance={instance}" if instance else "")


def _add(
    frame: Frame, parts: Parts, metric: str, labels: Mapping[str, str], values: list[float | None]
) -> None:
    name, with_instance = _column(parts, metric, labels)
    _put(frame, name if name not in frame.columns else with_instance, values)


def _put(frame: Frame, name: str, values: list[float | None]) -> None:
    unique = name
    n = 2
    while unique in frame.columns:
        unique = f"{name}#{n}"
        n += 1
    frame.columns[unique] = values


class _Api:
    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self.http = http
        self.url = url

    async def _get(self, path: str, params: list[tuple[str, str]]) -> Any:
        try:
            async with self.http.get(f"{self.url}{path}", params=params) as response:
                body = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as e:
            raise ExportError(f"Prometheus at {self.url} did not answer {path}: {e}") from e
        if not isinstance(body, dict) or body.get("status") != "success":
            error = body.get("error") if isinstance(body, dict) else body
            raise ExportError(f"Prometheus refused {path}: {error}")
        return body["data"]

    async def metadata(self) -> dict[str, str]:
        """Metric name -> type, as the scrape targets declared them ({} when none did)."""
        try:
            data = await self._get("/api/v1/metadata", [])
        except ExportError:
            return {}
        return {name: str(entries[0].get("type", "")) for name, entries in data.items() if entries}

    async def series(self, match: str, start: float, end: float) -> list[dict[str, str]]:
        params = [("match[]", match), ("start", f"{start:.3f}"), ("end", f"{end:.3f}")]
        data = await self._get("/api/v1/series", params)
        return [dict(labels) for labels in data]

    async def range(
        self, expr: str, times: list[float], step: float
    ) -> list[tuple[dict[str, str], list[float | None]]]:
        """(labels, one value or None per time) for every series `expr` gives."""
        params = [
            ("query", expr),
            ("start", f"{times[0]:.3f}"),
            ("end", f"{times[-1]:.3f}"),
            ("step", f"{step:.3f}"),
        ]
        data = await self._get("/api/v1/query_range", params)
        out = []
        for series in data.get("result", []):
            values: list[float | None] = [None] * len(times)
            for at, value in series.get("values", []):
                i = round((float(at) - times[0]) / step)
                if 0 <= i < len(times):
                    number = float(value)
                    values[i] = None if math.isnan(number) else number
            out.append((dict(series.get("metric", {})), values))
        return out
