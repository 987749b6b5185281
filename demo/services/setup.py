"""The services demo on this machine: built by `whytree demo`, served while whytree runs.

`whytree demo` calls `build_services_demo`: the demo scenario (demo.services.dataset)
ending this minute, as TSDB blocks in ``<WHYTREE_DATA_DIR>/demo-prometheus`` with a
``demo.json`` beside them. When PROMETHEUS_URL is not set, whytree's runtime calls
`serve_services_demo`, which starts a private `prometheus` over those blocks and
yields its URL — first rebuilding them when their data ended more than `MAX_AGE`
ago (the service runbooks ask about the last two hours by the clock).
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from demo.services.dataset import build_scenario_tsdb, demo_questions, demo_scenario
from demo.services.prometheus import LocalPrometheus, PrometheusUnavailableError
from demo.services.simulate import SimulationStats

log = logging.getLogger(__name__)

DEMO_DIR = "demo-prometheus"
MARKER = "demo.json"
MAX_AGE = timedelta(minutes=5)


def demo_dir(data_dir: Path) -> Path:
    return data_dir / DEMO_DIR


def build_services_demo(data_dir: Path, *, seed: int = 7) -> SimulationStats:
    """(Re)build the demo's TSDB blocks, ending this minute; PrometheusUnavailableError
    when promtool is missing or fails."""
    target = demo_dir(data_dir)
    fresh = target.with_name(f"{DEMO_DIR}.new")
    shutil.rmtree(fresh, ignore_errors=True)
    scenario = demo_scenario(seed)
    stats = build_scenario_tsdb(scenario, fresh / "tsdb")
    marker = {"seed": seed, "end": scenario.end.isoformat()}
    (fresh / MARKER).write_text(json.dumps(marker), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    fresh.rename(target)
    return stats


def describe_services_demo(stats: SimulationStats) -> str:
    """What was built, and questions to try with their known answers."""
    lines = [
        f"Built the services demo: {stats.series} Prometheus series, {stats.samples:,} samples "
        f"at 1 min from {stats.first:%Y-%m-%d %H:%M} to {stats.last:%Y-%m-%d %H:%M} UTC; "
        "whytree serves them on a private Prometheus while it runs (PROMETHEUS_URL unset).",
        "",
        "Try, for example:",
    ]
    for q in demo_questions():
        answer = q.expected + (f" ({q.detail})" if q.detail else "")
        answer += f", root {q.root}" if q.root else ""
        lines.append(f'  whytree ask "{q.en}"    # known cause: {answer}')
        lines.append(f'  whytree ask "{q.ru}"')
    return "\n".join(lines)


def _built(data_dir: Path) -> tuple[int, datetime] | None:
    try:
        marker = json.loads((demo_dir(data_dir) / MARKER).read_text(encoding="utf-8"))
        return int(marker["seed"]), datetime.fromisoformat(marker["end"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def has_services_demo(data_dir: Path) -> bool:
    """`whytree demo` built the services demo here."""
    return _built(data_dir) is not None


@asynccontextmanager
async def serve_services_demo(data_dir: Path) -> AsyncIterator[str]:
    """A private Prometheus over the demo (rebuilt first when stale); yields its URL.

    Raises PrometheusUnavailableError when it cannot be built or started.
    """
    built = _built(data_dir)
    if built is None:
        raise PrometheusUnavailableError("the services demo is not built (run `whytree demo`)")
    seed, end = built
    if datetime.now(UTC) - end > MAX_AGE:
        log.info("the services demo's data ended at %s: rebuilding it to end now", end)
        await asyncio.to_thread(build_services_demo, data_dir, seed=seed)
    async with LocalPrometheus(demo_dir(data_dir) / "tsdb") as prom:
        yield prom.url
