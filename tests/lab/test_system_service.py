"""The system lab's service program (lab/system/service.py) as real processes: checkout
calls payment over HTTP, and both export the call in Istio's names and labels — the caller
as reporter "source", the callee as reporter "destination" naming its caller; a call to a
service that is down is counted with no response code and answered 502."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from lab.lab import free_port
from lab.processes import group_alive, kill_group, start
from lab.system.topology import NAMES, SHOP, by_name


def test_the_shop_has_eight_services_and_calls_only_its_own() -> None:
    assert set(NAMES) >= {"front", "catalog", "cart", "checkout", "payment", "shipping"}
    assert len(NAMES) >= 8
    assert by_name("checkout").calls == ("cart", "stock", "payment", "shipping")
    assert by_name("cart").store == "redis" and by_name("stock").store == "postgres"
    for service in SHOP:
        assert set(service.calls) <= set(NAMES) and service.name not in service.calls


_SERVICE = (sys.executable, "-P", "-m", "lab.system.service")


@pytest.fixture
def services() -> Iterator[dict[str, str]]:
    """payment, and checkout whose peers are payment and a shipping that is not running."""
    ports = {"payment": free_port(), "checkout": free_port(), "shipping": free_port()}
    urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    with tempfile.TemporaryDirectory(prefix="whytree-system-service-") as scratch:
        procs = [
            start(
                name,
                [
                    *_SERVICE,
                    "--name",
                    name,
                    "--port",
                    str(ports[name]),
                    "--peers",
                    json.dumps(peers),
                ],
                logs=Path(scratch),
                cwd=Path(__file__).resolve().parents[2],
            )
            for name, peers in (
                ("payment", {}),
                ("checkout", {"payment": urls["payment"], "shipping": urls["shipping"]}),
            )
        ]
        try:
            yield urls
        finally:
            for proc in procs:
                kill_group(proc.pid)
            assert not any(group_alive(p.pid) for p in procs)


async def _get(http: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    deadline = time.monotonic() + 30
    while True:
        try:
            async with http.get(url) as response:
                return response.status, await response.text()
        except aiohttp.ClientConnectionError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.3)


async def test_a_call_is_exported_by_both_sides_in_istios_names(
    services: dict[str, str],
) -> None:
    async with aiohttp.ClientSession() as http:
        await _get(http, services["payment"] + "/healthz")
        status, _ = await _get(http, services["checkout"] + "/")
        assert status == 502  # shipping is down: the answer says the call failed
        _, mine = await _get(http, services["checkout"] + "/metrics")
        _, theirs = await _get(http, services["payment"] + "/metrics")
    source = (
        'istio_requests_total{destination_service="payment",destination_workload="payment",'
        'reporter="source",request_protocol="http",response_code="200",'
        'source_workload="checkout"} 1.0'
    )
    assert source in mine, mine
    assert 'destination_workload="shipping",reporter="source"' in mine
    assert 'response_code="0",source_workload="checkout"} 1.0' in mine
    # checkout's own answer, to a caller outside the mesh
    assert (
        'destination_workload="checkout",reporter="destination",request_protocol="http",'
        'response_code="502",source_workload="unknown"} 1.0'
    ) in mine
    destination = (
        'istio_requests_total{destination_service="payment",destination_workload="payment",'
        'reporter="destination",request_protocol="http",response_code="200",'
        'source_workload="checkout"} 1.0'
    )
    assert destination in theirs, theirs
    assert "istio_request_duration_milliseconds_bucket{" in theirs
    assert 'le="60000.0"' in theirs
