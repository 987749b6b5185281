"""The services simulator: OpenMetrics text promtool reads, and faults where they were planted."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from demo.services import Fault, Scenario, default_graph, write_openmetrics
from demo.services.dataset import demo_questions, demo_scenario
from demo.services.simulate import simulate

END = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def small(*faults: Fault) -> Scenario:
    return Scenario(default_graph(), END - timedelta(hours=6), END, seed=1, faults=faults)


def test_openmetrics_has_every_series_with_increasing_counters(tmp_path: Path) -> None:
    path = tmp_path / "series.om.txt"
    stats = write_openmetrics(small(Fault("deploy", "search", END - timedelta(hours=1))), path)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("# EOF\n") and stats.samples == len(text.splitlines()) - 1
    names = set(re.findall(r"^([a-z_]+)\{", text, flags=re.MULTILINE))
    assert {
        "http_requests_total", "http_request_duration_seconds_bucket", "build_info",
        "http_client_requests_total", "container_cpu_cfs_throttled_periods_total",
        "container_memory_working_set_bytes", "kube_pod_container_status_restarts_total",
    } <= names  # fmt: skip
    counter = [
        float(line.split()[1])
        for line in text.splitlines()
        if line.startswith('http_requests_total{service="checkout",code="200"}')
    ]
    assert len(counter) == 360 and counter == sorted(counter)
    versions = re.findall(r'^build_info\{service="search",version="([^"]+)"\}', text, re.M)
    assert versions.count("1.4.2") == 300 and versions.count("1.5.0") == 60


def test_a_slow_dependency_reaches_its_callers_a_few_minutes_later() -> None:
    onset = END - timedelta(hours=1)
    times, effects = simulate(small(Fault("dependency", "inventory", onset)))
    at = times.index(onset)
    cart, inventory = effects["cart"].latency, effects["inventory"].latency
    assert inventory[at] > 3 * inventory[at - 1]
    assert cart[at + 1] < 1.5 * cart[at - 1] < cart[at + 4]  # cart slows after the lag
    assert effects["search"].latency[at + 10] < 1.5 * effects["search"].latency[at - 1]


def test_the_demo_questions_name_faults_that_were_planted() -> None:
    scenario = demo_scenario(7, end=END)
    planted = {f.service for f in scenario.faults}
    for question in demo_questions():
        assert question.service in question.en and question.service in question.ru
        if question.expected == "none":
            assert question.service not in planted
        elif question.root:
            assert question.root in planted and question.service not in planted
        else:
            assert question.service in planted
