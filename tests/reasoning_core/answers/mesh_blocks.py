"""Istio's mesh metrics of a small shop, simulated as a sidecar counts them, for promtool:
`istio_requests_total` and `istio_request_duration_milliseconds` with `reporter`,
`source_workload`, `destination_workload` and `response_code`, each side from its own
sidecar's target. A workload's answer takes its own time plus its calls (made one after
the other); a call takes the callee's answer plus the way there. Each workload scraped
every 15 s, two requests a second on every edge. A blackbox probe of the front door
(`PROBE`, through the proxy in front of front) takes as long as front's answer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

#: Istio's default buckets (lab/system/mesh.py), in ms.
BUCKETS = (1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)
STEP_S = 15
RATE = 2.0

#: caller -> callees; "unknown" is outside the mesh (nginx in front of front)
SHOP: dict[str, tuple[str, ...]] = {
    "unknown": ("front",),
    "front": ("catalog", "checkout"),
    "catalog": (),
    "checkout": ("cart", "stock", "payment"),
    "cart": (),
    "stock": (),
    "payment": (),
}
OWN_MS = {"front": 2.0, "catalog": 3.0, "checkout": 2.0, "cart": 1.0, "stock": 3.0, "payment": 2.0}
PORTS = {name: 9100 + i for i, name in enumerate(OWN_MS)}
#: blackbox_exporter's probe of the shop's front door (nginx, in front of front)
PROBE = "http://127.0.0.1:8080/checkout"


@dataclass
class Fault:
    """From `start` on: a workload's own time (ms), a way's extra time (caller, callee)."""

    start: datetime
    own_ms: Mapping[str, float] = field(default_factory=dict)
    way_ms: Mapping[tuple[str, str], float] = field(default_factory=dict)


@dataclass
class Extra:
    """Series a real mesh may carry that the graph must leave out, with a line."""

    self_call: str | None = None  # a workload calling itself
    unlabelled_call: str | None = None  # a call of this callee with no source_workload
    call_back: tuple[str, str] | None = None  # a call edge closing a cycle


def _answer(name: str, own: Mapping[str, float], way: Mapping[tuple[str, str], float]) -> float:
    return own[name] + sum(_call(name, c, own, way) for c in SHOP[name])


def _call(
    caller: str, callee: str, own: Mapping[str, float], way: Mapping[tuple[str, str], float]
) -> float:
    return _answer(callee, own, way) + 0.5 + way.get((caller, callee), 0.0)


def series(end: datetime, minutes: int, fault: Fault | None, extra: Extra | None = None) -> str:
    """OpenMetrics text of `minutes` up to `end`."""
    extra = extra or Extra()
    edges = [(s, c) for s, callees in SHOP.items() for c in callees]
    edges += [(extra.self_call, extra.self_call)] if extra.self_call else []
    edges += [extra.call_back] if extra.call_back else []
    lines: dict[str, list[str]] = {"up": [], "requests": [], "buckets": [], "probe": []}
    totals: dict[tuple[str, ...], float] = {}
    start = end - timedelta(minutes=minutes)
    for i in range(minutes * 60 // STEP_S + 1):
        at = start + timedelta(seconds=STEP_S * i)
        faulty = fault is not None and at >= fault.start
        own = {**OWN_MS, **(fault.own_ms if fault and faulty else {})}
        way = dict(fault.way_ms) if fault and faulty else {}
        stamp = f"{at.timestamp():.0f}"
        lines["up"] += [
            f'up{{job="mesh",instance="127.0.0.1:{p}"}} 1 {stamp}' for p in PORTS.values()
        ]
        seconds = (_answer("front", own, way) + 1.0) / 1000
        lines["probe"] += [
            f'probe_success{{job="blackbox",instance="{PROBE}"}} 1 {stamp}',
            f'probe_duration_seconds{{job="blackbox",instance="{PROBE}"}} {seconds:.4f} {stamp}',
            f'probe_http_status_code{{job="blackbox",instance="{PROBE}"}} 200 {stamp}',
        ]
        for caller, callee in edges:
            answer = _answer(callee, own, way) if callee in OWN_MS else 1.0
            sides = [("destination", callee, answer)]
            if caller != "unknown":
                sides.append(("source", caller, answer + 0.5 + way.get((caller, callee), 0.0)))
            for reporter, sidecar, ms in sides:
                labels = _labels(reporter, caller, callee, sidecar, extra)
                _sample(
                    lines, totals, (reporter, caller, callee), labels=labels, ms=ms, stamp=stamp
                )
    return "\n".join(
        [
            "# TYPE up gauge",
            *lines["up"],
            "# TYPE probe_success gauge",
            *(line for line in lines["probe"] if line.startswith("probe_success")),
            "# TYPE probe_duration_seconds gauge",
            *(line for line in lines["probe"] if line.startswith("probe_duration")),
            "# TYPE probe_http_status_code gauge",
            *(line for line in lines["probe"] if line.startswith("probe_http_status")),
            "# TYPE istio_requests counter",
            *lines["requests"],
            "# TYPE istio_request_duration_milliseconds histogram",
            *lines["buckets"],
            "# EOF",
            "",
        ]
    )


def _sample(
    lines: dict[str, list[str]],
    totals: dict[tuple[str, ...], float],
    key: tuple[str, str, str],
    *,
    labels: str,
    ms: float,
    stamp: str,
) -> None:
    """One scrape of one side of one edge: its counter and its histogram's buckets."""
    totals[key] = totals.get(key, 0.0) + RATE * STEP_S
    code = 'response_code="200"'
    lines["requests"].append(f"istio_requests_total{{{labels},{code}}} {totals[key]:.0f} {stamp}")
    for le in (*BUCKETS, float("inf")):
        bucket = (*key, str(le))
        if ms <= le:
            totals[bucket] = totals.get(bucket, 0.0) + RATE * STEP_S
        shown = "+Inf" if le == float("inf") else f"{le:g}"
        lines["buckets"].append(
            f'istio_request_duration_milliseconds_bucket{{{labels},{code},le="{shown}"}} '
            f"{totals.get(bucket, 0.0):.0f} {stamp}"
        )


def _labels(reporter: str, caller: str, callee: str, sidecar: str, extra: Extra) -> str:
    port = PORTS.get(sidecar, 9099)
    source = "" if extra.unlabelled_call == callee and reporter == "source" else caller
    parts: Iterable[str] = (
        'job="mesh"',
        f'instance="127.0.0.1:{port}"',
        f'reporter="{reporter}"',
        *([f'source_workload="{source}"'] if source else []),
        f'destination_workload="{callee}"',
        f'destination_service="{callee}"',
        'request_protocol="http"',
    )
    return ",".join(parts)
