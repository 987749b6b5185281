"""The services simulator: a scenario's series as OpenMetrics text (stdlib only).

It models what happens, never how anything is detected. Every service gets, per
sample (`Scenario.step_seconds`), the series common exporters publish:

* ``http_requests_total{service, code}`` (code 200 / 500) and the
  ``http_request_duration_seconds_bucket{service, le}`` histogram;
* ``http_client_requests_total{service, dependency}`` — one per call edge;
* ``container_cpu_cfs_periods_total`` / ``container_cpu_cfs_throttled_periods_total``,
  ``container_memory_working_set_bytes``, ``container_spec_memory_limit_bytes``,
  ``container_oom_events_total`` and ``kube_pod_container_status_restarts_total``;
* ``build_info{service, version}`` (1 while that version runs).

Demand follows a daily and weekly cycle with noise. Faults change a service's own
latency, errors, demand, CPU or memory; a callee's extra latency and errors reach
its callers `HOP_LAG` later, hop by hop (a slow dependency makes its callers slow).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TextIO

from demo.services.graph import Fault, Scenario, Service

#: Histogram buckets of http_request_duration_seconds.
BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
#: How long a callee's trouble takes to show at its callers, per hop.
HOP_LAG = timedelta(minutes=3)
MEMORY_LIMIT = 512 * 1024 * 1024
CFS_PERIODS_PER_SEC = 10.0
_SIGMA = 0.45  # spread of log-latency
_RESTART_EVERY = {"crash_loop": 5, "memory": 8}  # minutes between restarts
_LEAK_MINUTES = 40
_MORNING = 6  # demand rises from 06:00
#: Per fault kind, per unit of strength: more load, slower (latency x 1 + k), extra 5xx
#: share, extra throttled CPU share. A `dependency` fault is a slow backend of its own.
_EFFECTS: dict[str, tuple[float, float, float, float]] = {
    "deploy": (0.0, 0.3, 0.06, 0.0),
    "dependency": (0.0, 3.0, 0.02, 0.0),
    "surge": (1.5, 1.0, 0.01, 0.04),
    "cpu": (0.0, 1.5, 0.004, 0.45),
    "memory": (0.0, 0.2, 0.04, 0.0),
    "crash_loop": (0.0, 0.1, 0.08, 0.0),
}


@dataclass
class _Effects:
    """A service's per-sample state, own and received from callees."""

    load: list[float]
    latency: list[float]  # median latency, s
    errors: list[float]  # 5xx share
    throttled: list[float]
    memory: list[float]  # share of the limit
    restarts: list[int]  # restarts in this sample
    ooms: list[int]


@dataclass(frozen=True)
class SimulationStats:
    series: int
    samples: int
    first: datetime
    last: datetime


def seasonality(at: datetime) -> float:
    """Demand relative to the daily peak: low at night, lower at weekends."""
    hour = at.hour + at.minute / 60
    day = 0.45
    if hour >= _MORNING:
        day += 0.55 * max(0.0, math.sin(math.pi * (hour - _MORNING) / 18))
    return day * (0.8 if at.weekday() >= 5 else 1.0)  # noqa: PLR2004 - Saturday


def sample_times(scenario: Scenario) -> list[datetime]:
    step = timedelta(seconds=scenario.step_seconds)
    count = int((scenario.end - scenario.start) / step)
    return [scenario.start + i * step for i in range(count)]


def simulate(scenario: Scenario) -> tuple[list[datetime], dict[str, _Effects]]:
    """Every service's state per sample, callees first so their trouble can travel up."""
    times = sample_times(scenario)
    rng = random.Random(scenario.seed)
    lag = max(1, int(HOP_LAG.total_seconds() // scenario.step_seconds))
    graph = scenario.graph
    done: dict[str, _Effects] = {}
    pending = list(graph.names)
    while pending:
        ready = [n for n in pending if all(c in done for c in graph.callees(n))]
        if not ready:
            raise ValueError("the service graph has a cycle")
        for name in ready:
            faults = [f for f in scenario.faults if f.service == name]
            own = _own(graph.service(name), faults, times, rng, scenario.step_seconds)
            for callee in graph.callees(name):
                _receive(own, done[callee], graph.service(callee), lag)
            done[name] = own
            pending.remove(name)
    return times, done


def _own(
    service: Service, faults: list[Fault], times: list[datetime], rng: random.Random, step: int
) -> _Effects:
    n = len(times)
    fx = _Effects([0.0] * n, [0.0] * n, [0.0] * n, [0.0] * n, [0.0] * n, [0] * n, [0] * n)
    for i, at in enumerate(times):
        season = seasonality(at)
        load = season * rng.gauss(1.0, 0.03)
        latency = service.latency * (0.9 + 0.15 * season) * rng.gauss(1.0, 0.03)
        errors = service.error_ratio * max(0.2, rng.gauss(1.0, 0.3))
        throttled = max(0.0, 0.015 + 0.015 * season + rng.gauss(0, 0.004))
        memory = 0.5 + 0.05 * season + rng.gauss(0, 0.01)
        for fault in faults:
            minutes = (at - fault.onset).total_seconds() / 60
            memory = _memory_share(fault, minutes, memory)
            if minutes < 0:
                continue
            more_load, slower, failing, throttling = _EFFECTS[fault.kind]
            load *= 1 + more_load * fault.strength
            latency *= 1 + slower * fault.strength
            errors += failing * fault.strength
            throttled += throttling * fault.strength
            every = _RESTART_EVERY.get(fault.kind)
            if every and int(minutes) % every == 0 and minutes - int(minutes) < step / 60:
                fx.restarts[i] += 1
                fx.ooms[i] += 1 if fault.kind == "memory" else 0
        fx.load[i], fx.latency[i], fx.errors[i] = load, latency, min(errors, 0.9)
        fx.throttled[i], fx.memory[i] = min(throttled, 0.95), min(memory, 0.995)
    return fx


def _memory_share(fault: Fault, minutes: float, usual: float) -> float:
    """A memory fault: a leak for 40 minutes, then a sawtooth up to the limit (OOM kills)."""
    if fault.kind != "memory" or minutes < -_LEAK_MINUTES:
        return usual
    if minutes < 0:
        return max(usual, 0.55 + 0.4 * (minutes + _LEAK_MINUTES) / _LEAK_MINUTES)
    cycle = _RESTART_EVERY["memory"]
    return 0.88 + 0.11 * (minutes % cycle) / cycle


def _receive(caller: _Effects, callee: _Effects, callee_service: Service, lag: int) -> None:
    """The callee's extra latency and errors, `lag` samples later, added to the caller's."""
    base_latency = callee_service.latency
    base_errors = callee_service.error_ratio
    for i in range(lag, len(caller.latency)):
        extra = callee.latency[i - lag] - base_latency * 1.3
        if extra > 0:
            caller.latency[i] += extra
        failed = callee.errors[i - lag] - base_errors * 3
        if failed > 0:
            caller.errors[i] = min(0.9, caller.errors[i] + 0.7 * failed)


def _cdf(le: float, median: float) -> float:
    return 0.5 * (1 + math.erf(math.log(le / median) / (_SIGMA * math.sqrt(2))))


def write_openmetrics(scenario: Scenario, path: Path) -> SimulationStats:
    """Simulate `scenario` and write it as OpenMetrics text (ending in ``# EOF``)."""
    times, effects = simulate(scenario)
    stamps = [f" {int(at.timestamp())}\n" for at in times]
    series = samples = 0
    with path.open("w", encoding="utf-8") as out:
        for service in scenario.graph.services:
            for name, values in _series(scenario, service, effects[service.name]):
                _write(out, name, values, stamps)
                series += 1
                samples += sum(v is not None for v in values)
        out.write("# EOF\n")
    return SimulationStats(series, samples, times[0], times[-1])


def _write(out: TextIO, name: str, values: list[float | None], stamps: list[str]) -> None:
    out.write(
        "".join(
            f"{name} {value:.4f}{stamp}"
            for value, stamp in zip(values, stamps, strict=True)
            if value is not None
        )
    )


def _series(
    scenario: Scenario, service: Service, fx: _Effects
) -> Iterator[tuple[str, list[float | None]]]:
    step = scenario.step_seconds
    label = f'service="{service.name}"'
    requests = [service.rps * load * step for load in fx.load]
    failed = [r * e for r, e in zip(requests, fx.errors, strict=True)]
    yield (
        f'http_requests_total{{{label},code="200"}}',
        _cumulative([r - f for r, f in zip(requests, failed, strict=True)]),
    )
    yield f'http_requests_total{{{label},code="500"}}', _cumulative(failed)
    for le in (*BUCKETS, math.inf):
        share = [1.0 if le == math.inf else _cdf(le, m) for m in fx.latency]
        le_text = "+Inf" if le == math.inf else f"{le:g}"
        yield (
            f'http_request_duration_seconds_bucket{{{label},le="{le_text}"}}',
            _cumulative([r * s for r, s in zip(requests, share, strict=True)]),
        )
    for callee in scenario.graph.callees(service.name):
        yield (
            f'http_client_requests_total{{{label},dependency="{callee}"}}',
            _cumulative([r * 0.5 for r in requests]),
        )
    periods = [CFS_PERIODS_PER_SEC * step] * len(fx.load)
    yield f"container_cpu_cfs_periods_total{{{label}}}", _cumulative(periods)
    yield (
        f"container_cpu_cfs_throttled_periods_total{{{label}}}",
        _cumulative([p * t for p, t in zip(periods, fx.throttled, strict=True)]),
    )
    yield f"container_memory_working_set_bytes{{{label}}}", [m * MEMORY_LIMIT for m in fx.memory]
    yield f"container_spec_memory_limit_bytes{{{label}}}", [float(MEMORY_LIMIT)] * len(fx.memory)
    yield f"container_oom_events_total{{{label}}}", _cumulative([float(n) for n in fx.ooms])
    yield (
        f"kube_pod_container_status_restarts_total{{{label}}}",
        _cumulative([float(n) for n in fx.restarts]),
    )
    yield from _versions(scenario, service, label)


def _versions(
    scenario: Scenario, service: Service, label: str
) -> Iterator[tuple[str, list[float | None]]]:
    """build_info: one series per version, 1 while it runs."""
    changes = sorted(
        [(d.at, d.version) for d in scenario.deploys if d.service == service.name]
        + [
            (f.onset, _next_version(service.version))
            for f in scenario.faults
            if f.service == service.name and f.kind == "deploy"
        ]
    )
    times = sample_times(scenario)
    running = [service.version] * len(times)
    for at, version in changes:
        running = [version if t >= at else v for t, v in zip(times, running, strict=True)]
    for version in dict.fromkeys(running):
        yield (
            f'build_info{{{label},version="{version}"}}',
            [1.0 if v == version else None for v in running],
        )


def _next_version(version: str) -> str:
    major, minor, _ = version.split(".")
    return f"{major}.{int(minor) + 1}.0"


def _cumulative(increments: list[float]) -> list[float | None]:
    total = 0.0
    out: list[float | None] = []
    for value in increments:
        total += value
        out.append(total)
    return out
