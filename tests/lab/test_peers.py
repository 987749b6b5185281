"""RCAEval's own BARO and N-Sigma beside whytree, over a real Prometheus: series written as
OpenMetrics, turned into TSDB blocks by promtool and served by a private Prometheus, exported
as RCAEval's frame (lab/system/export.py) and ranked by the peers in their own environment
(`.venv-peers`, `make peers`). One service's CPU steps up at the injection: both put that
service first. And the export's columns over the real lab's recording (tests/data/lab)."""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from lab.system.beside import add_peer_figures, rank_windows
from lab.system.export import ExportError, Frame, export_window
from lab.system.parts import THREE_PART
from lab.system.peers import PEERS, peers_python, rank

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

STEP = 5
SAMPLES = 121  # 10 min at the lab's 5 s scrape
INJECT_AT = 96  # the fault at 8 min: 8 min of normal, 2 min of fault
GROUPS = ("front", "cart", "stock", "payment")
BUCKETS = ("0.05", "0.1", "0.25", "0.5", "1", "+Inf")


def _series(start: int) -> str:
    """Each group's CPU (a counter) and resident memory, the web job's request histogram,
    a PostgreSQL gauge — all with noise; stock's CPU steps from 5 % to 60 % at INJECT_AT."""
    rng = random.Random(55)
    stamps = [start + i * STEP for i in range(SAMPLES)]
    lines: list[str] = []
    for group in GROUPS:
        cpu = 0.0
        for i, at in enumerate(stamps):
            busy = 0.6 if group == "stock" and i >= INJECT_AT else 0.05
            cpu += (busy + rng.uniform(-0.01, 0.01)) * STEP
            lines.append(
                f'namedprocess_namegroup_cpu_seconds_total{{job="process",groupname="{group}",'
                f'mode="user"}} {cpu:.4f} {at}'
            )
        for at in stamps:
            lines.append(
                f'namedprocess_namegroup_memory_bytes{{job="process",groupname="{group}",'
                f'memtype="resident"}} {50e6 + rng.uniform(-1e6, 1e6):.0f} {at}'
            )
    counts = dict.fromkeys(BUCKETS, 0.0)
    for le in BUCKETS:
        for at in stamps:
            # every bucket counts two requests a second, its share of the slow ones noisy
            share = 1.0 if le == "+Inf" else min(1.0, float(le) * 4 + rng.uniform(0, 0.02))
            counts[le] += 10 * share
            lines.append(
                f'http_request_duration_seconds_bucket{{job="web",route="/checkout",le="{le}"}} '
                f"{counts[le]:.3f} {at}"
            )
    for at in stamps:
        lines.append(f'pg_stat_activity_count{{job="postgres"}} {rng.randint(4, 6)} {at}')
    return "\n".join(lines) + "\n# EOF\n"


@pytest.fixture(scope="module")
def synthetic() -> tuple[Path, int]:
    """The series' TSDB blocks and their first timestamp."""
    start = (int(time.time()) // 3600 - 2) * 3600  # two whole hours back: a finished block
    scratch = Path(tempfile.mkdtemp(prefix="whytree-peers-tsdb-"))
    (scratch / "series.om").write_text(_series(start), encoding="utf-8")
    build_tsdb(scratch / "series.om", scratch / "tsdb")
    return scratch / "tsdb", start


@pytest.fixture
async def prometheus(synthetic: tuple[Path, int]) -> AsyncIterator[tuple[str, int]]:
    tsdb, start = synthetic
    async with LocalPrometheus(tsdb) as server:
        yield server.url, start


async def _frame(url: str, start: int) -> Frame:
    return await export_window(url, THREE_PART, start=start, end=start + (SAMPLES - 1) * STEP)


async def test_the_export_names_columns_as_rcaeval_does(prometheus: tuple[str, int]) -> None:
    url, start = prometheus
    frame = await _frame(url, start)
    assert len(frame.times) == SAMPLES and frame.times[0] == start
    assert frame.services() == ["cart", "front", "payment", "postgres", "stock", "web"]
    names = set(frame.columns)
    # the columns RCAEval's datasets carry for every service
    assert {f"{g}_cpu" for g in GROUPS} | {f"{g}_mem" for g in GROUPS} <= names
    assert "web_latency" in names
    # every series: its labels but job, instance and the service's own after a `;`
    assert "stock_namedprocess_namegroup_cpu_seconds_total;mode=user" in names
    assert "postgres_pg_stat_activity_count" in names
    # a histogram is its 90th percentile, not its buckets
    assert "web_http_request_duration_seconds-p90;route=/checkout" in names
    assert not any("_bucket" in n for n in names)
    # a counter is a per-second rate: stock's CPU from ~0.05 s/s to ~0.6 s/s
    cpu = frame.columns["stock_namedprocess_namegroup_cpu_seconds_total;mode=user"]
    assert cpu[0] is None
    before, after = cpu[10], cpu[INJECT_AT + 5]
    assert before is not None and after is not None
    assert 0.03 < before < 0.07 and 0.55 < after < 0.65
    derived = frame.columns["stock_cpu"][INJECT_AT + 10]
    assert derived is not None and 0.55 < derived < 0.65


async def test_the_export_refuses_a_window_it_cannot_take(prometheus: tuple[str, int]) -> None:
    url, start = prometheus
    with pytest.raises(ExportError, match="window"):
        await export_window(url, THREE_PART, start=start, end=start)
    with pytest.raises(ExportError, match="did not answer"):
        await export_window("http://127.0.0.1:9", THREE_PART, start=start, end=start + 60)


async def test_baro_and_nsigma_put_the_service_that_stepped_up_first(
    prometheus: tuple[str, int],
) -> None:
    url, start = prometheus
    frame = await _frame(url, start)
    answers = await rank(frame, start + INJECT_AT * STEP, python=peers_python())
    assert set(answers) == set(PEERS)
    for method, answer in answers.items():
        assert answer.error is None, (method, answer.error)
        assert answer.services[0] == "stock", (method, answer.columns[:5])
        assert answer.columns[0].startswith("stock_"), (method, answer.columns[:5])
        # every service ranked, once
        assert sorted(answer.services) == frame.services()


async def test_a_peer_that_fails_says_so(prometheus: tuple[str, int]) -> None:
    url, start = prometheus
    frame = await _frame(url, start)
    answers = await rank(frame, start, python=peers_python(), methods=("granger",))
    assert answers["granger"].error is not None and "not one of" in answers["granger"].error
    assert answers["granger"].services == []


async def test_bench_windows_get_every_peers_ranks_beside_whytrees(
    prometheus: tuple[str, int],
) -> None:
    url, start = prometheus
    injected = start + INJECT_AT * STEP
    rows: list[dict[str, Any]] = [
        {
            "fault": "quiet",
            "round": 0,
            "nothing_wrong": True,
            "component": None,
            "injected_at": start + 60.0,
            "cleared_at": start + 120.0,
        },
        {
            "fault": "stock-cpu",
            "round": 0,
            "nothing_wrong": False,
            "component": "db-proxy",
            "report": "🔴 slow\n\nCPU saturation in db-proxy, then postgres",
            "injected_at": float(injected),
            "cleared_at": float(start + (SAMPLES - 1) * STEP),
        },
    ]
    await rank_windows(url, THREE_PART, rows, python=peers_python())
    assert "peers" not in rows[0]
    window = rows[1]
    assert window["service"] == "db-proxy"
    assert window["whytree_services"] == ["db-proxy", "postgres"]
    assert window["peer_columns"] > 10
    for method in PEERS:
        assert window["peers"][method]["services"][0] == "stock", window["peers"][method]
    figures: dict[str, Any] = {"by_fault": {"quiet": {}, "stock-cpu": {}}}
    add_peer_figures(figures, rows)
    assert figures["service_ac_at_1"] == 1.0  # whytree named the window's service
    assert figures["peers"]["baro"]["service_ac_at_1"] == 0.0  # stock is not db-proxy


async def test_the_real_labs_recording_exports_one_column_per_service_and_metric(
    lab_recording: tuple[Path, dict[str, datetime]],
) -> None:
    tsdb, starts = lab_recording
    begin = starts["cpu-hog"].timestamp() - 240
    async with LocalPrometheus(tsdb) as server:
        frame = await export_window(server.url, THREE_PART, start=begin, end=begin + 360)
    services = set(frame.services())
    assert {"web", "db-proxy", "postgres", "node", "load"} <= services, services
    assert services <= {"web", "db-proxy", "postgres", "node", "load", "prometheus"} | {
        "process-exporter"
    }, services
    for name in ("web_cpu", "postgres_cpu", "db-proxy_mem", "web_latency"):
        assert name in frame.columns, name
    assert len(frame.columns) > 150
    assert all("_" in name and name.split("_")[0] for name in frame.columns)
