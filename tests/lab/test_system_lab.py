"""The system lab with a few of its services (lab/system/system_lab.py): nginx in front of
`front`, the load at nginx, front → checkout → cart (its own Redis) and stock (the lab's
PostgreSQL) and payment; Prometheus holds the calls in Istio's names with both sides'
reporters, and the stores' and nginx's exporters answer; `down` leaves no process. And one
fault (lab/system/kinds.py) injected into front → checkout → payment: its effect in
Prometheus and the lab's alert rules, then cleared."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from lab.cli import add_lab_parsers, run_lab
from lab.fault import clear, inject, load_fault
from lab.lab import LabError
from lab.processes import group_alive
from lab.system.system_lab import SystemLab, missing_packages

MISSING = missing_packages()
pytestmark = [
    pytest.mark.live,
    pytest.mark.slow,
    pytest.mark.skipif(
        "prometheus" in MISSING, reason="Prometheus cannot be installed here: " + str(MISSING)
    ),
]
SERVICES = ("front", "checkout", "cart", "stock", "payment")


async def _value(prometheus: str, query: str) -> float | None:
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http,
        http.get(f"{prometheus}/api/v1/query", params={"query": query}) as response,
    ):
        body: dict[str, Any] = await response.json()
    result = body["data"]["result"]
    return float(result[0]["value"][1]) if result else None


async def _until(prometheus: str, query: str, timeout_s: float = 90) -> float:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = await _value(prometheus, query)
        if value:
            return value
        await asyncio.sleep(2)
    raise AssertionError(f"no {query} within {timeout_s} s")


def test_a_bad_rule_file_stops_the_system_lab_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = argparse.ArgumentParser()
    add_lab_parsers(parser.add_subparsers(dest="command"))
    with tempfile.TemporaryDirectory(prefix="whytree-system-lab-") as scratch:
        args = parser.parse_args(["lab", "up", "--system", "--rules", f"{scratch}/none.yml"])
        assert run_lab(Path(scratch), None, None, args) == 2
        assert not (Path(scratch) / "lab" / "state.json").exists()
    assert "none.yml: cannot be read" in capsys.readouterr().err


def test_a_service_not_in_the_shop_is_refused_before_anything_starts() -> None:
    with tempfile.TemporaryDirectory(prefix="whytree-system-lab-") as scratch:
        lab = SystemLab(Path(scratch) / "lab")
        with pytest.raises(LabError, match="no service basket"):
            lab.up_system(services=("front", "basket"))
        assert not lab.state.exists()


async def test_the_calls_reach_prometheus_in_istios_names_and_down_leaves_nothing() -> None:
    # Not pytest's tmp_path: PostgreSQL runs as another user who must reach its data.
    with tempfile.TemporaryDirectory(prefix="whytree-system-lab-") as scratch:
        lab = SystemLab(Path(scratch) / "lab")
        notes = await asyncio.to_thread(lab.up_system, services=SERVICES)
        groups = [p["pid"] for p in lab.read()["processes"]]
        try:
            assert not lab.status().dead, lab.status()
            names = {p["name"] for p in lab.read()["processes"]}
            assert set(SERVICES) <= names and "prometheus" in names
            prometheus = f"http://127.0.0.1:{lab.read()['ports']['prometheus']}"
            mesh = 'sum(istio_requests_total{{reporter="{}",source_workload="{}",destination_workload="{}",response_code="200"}})'  # noqa: E501
            for reporter, source, destination in (
                ("source", "front", "checkout"),
                ("destination", "front", "checkout"),
                ("source", "checkout", "cart"),
                ("destination", "checkout", "stock"),
                ("destination", "checkout", "payment"),
            ):
                await _until(prometheus, mesh.format(reporter, source, destination))
            # the load comes through nginx: front's callers are outside the mesh
            await _until(
                prometheus,
                'sum(istio_requests_total{reporter="destination",destination_workload="front",'
                'source_workload="unknown"})',
            )
            await _until(
                prometheus,
                "histogram_quantile(0.9, sum by (le) (rate("
                'istio_request_duration_milliseconds_bucket{destination_workload="checkout"}'
                "[30s])))",
            )
            for package, up in (
                ("prometheus-redis-exporter", "redis_up"),
                ("prometheus-nginx-exporter", "nginx_up"),
                ("prometheus-postgres-exporter", "pg_up"),
            ):
                if package in MISSING:
                    assert any(package in note for note in notes), notes
                else:
                    assert await _until(prometheus, up) == 1.0, up
        finally:
            stopped = await asyncio.to_thread(lab.down)
        assert set(SERVICES) <= set(stopped)
        assert not any(group_alive(pid) for pid in groups)
        assert not lab.state.exists() and not lab.cgroup.exists()


async def test_a_delay_on_a_services_inbound_path_shows_in_prometheus_and_clears(
    tmp_path: Path,
) -> None:
    """payment's inbound path delayed: checkout's calls to it (the caller's side) slow past a
    second and checkout's latency alert goes pending, while payment's own side stays fast;
    cleared, payment answers at once again and its control file is gone."""
    fault = load_fault(_fault_file(tmp_path, "kind: delay\ntarget: payment\nduration_s: 90\n"))
    with tempfile.TemporaryDirectory(prefix="whytree-system-lab-") as scratch:
        lab = SystemLab(Path(scratch) / "lab")
        await asyncio.to_thread(lab.up_system, services=("front", "checkout", "payment"))
        try:
            data = lab.read()
            prometheus = f"http://127.0.0.1:{data['ports']['prometheus']}"
            payment = f"http://127.0.0.1:{data['ports']['payment']}/charge"
            await asyncio.to_thread(inject, lab, fault)
            edge = (
                "histogram_quantile(0.9, sum by (le) (rate(istio_request_duration_milliseconds_"
                'bucket{{reporter="{}",source_workload="checkout",destination_workload='
                '"payment"}}[20s])))'
            )
            assert await _until(prometheus, edge.format("source") + " > 1000") > 1000
            own = await _until(prometheus, edge.format("destination"))
            assert own < 1000  # the wait was before payment saw the request
            await _until(
                prometheus,
                'count(ALERTS{alertname="IstioLatency99Percentile",'
                'destination_workload="checkout"})',
            )
            assert (lab.root / "control" / "payment.json").exists()
            await asyncio.to_thread(clear, lab)
            assert not (lab.root / "control" / "payment.json").exists()
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http:
                await asyncio.sleep(1.0)  # the service looks at its switch twice a second
                started = time.monotonic()
                async with http.get(payment) as response:
                    assert response.status == 200
                # below the fault's 1.5 s inbound delay: the wait is gone (its control
                # file too, above); a wider margin would need a longer delay in the lab
                assert time.monotonic() - started < 1.5
        finally:
            stopped = await asyncio.to_thread(lab.down)
        assert {"front", "checkout", "payment", "prometheus", "alertmanager"} <= set(stopped)
        assert not lab.state.exists()
        assert not any(p.exists() for p in (lab.cgroup, lab.cpu_cgroup, lab.cpuacct))


def _fault_file(folder: Path, text: str) -> Path:
    path = folder / "fault.yaml"
    path.write_text(text)
    return path
