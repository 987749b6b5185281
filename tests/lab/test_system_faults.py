"""The system lab's faults as data (lab/system/kinds.py, lab/system/draw.py), its rules and
process groups, and the fault switch of a real service process (lab/system/control.py):
a release that raises, connections reset, file descriptors exhausted, a delay on the
inbound path — each ended by removing the control file."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from benchmarks.cli import add_bench_parsers, run_bench
from bot.config import load_settings
from lab.bench import summarise
from lab.fault import FAULTS_DIR, FaultFileError, check_target, load_fault_file, load_faults
from lab.lab import LabError, free_port
from lab.logs import system_log_sources
from lab.processes import group_alive, kill_group, start
from lab.rules import load_rules
from lab.system.bench import add_service_figures, format_system_report
from lab.system.chaos import switch
from lab.system.control import MAX_FAULT_S, Switch
from lab.system.draw import draw, runnable
from lab.system.kinds import KINDS
from lab.system.parts import SYSTEM
from lab.system.rules import system_rules
from lab.system.system_lab import process_groups
from lab.system.topology import NAMES
from logsources import parse_log_sources

SHIPPED = FAULTS_DIR / "system"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_the_shipped_set_covers_every_kind_and_names_only_the_shops_services() -> None:
    faults = load_faults(SHIPPED)
    kinds = {f.kind for f in faults if f.kind}
    assert kinds == set(KINDS)
    assert all(f.target in NAMES for f in faults if f.kind)
    assert len({f.name for f in faults}) == len(faults)  # the grid's names are distinct
    assert any(f.nothing_wrong for f in faults)
    # a system fault runs the chaos program on its target, bounded, and clears it
    delay = next(f for f in faults if f.name == "delay-out-checkout")
    assert "--kind delay --direction outbound" in delay.start and "--clear" in delay.stop
    assert delay.component == "checkout" and 0 < delay.duration_s <= 900


def test_the_holdout_follows_the_format() -> None:
    assert len(load_faults(FAULTS_DIR / "system-holdout")) >= 12


def test_a_target_or_kind_not_in_the_lab_is_refused_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(FaultFileError, match=r"target 'basket' is not a service"):
        load_fault_file(_write(tmp_path, "a.yaml", "kind: cpu\ntarget: basket\n"))
    with pytest.raises(FaultFileError, match=r"kind 'flood' is not one of cpu"):
        load_fault_file(_write(tmp_path, "b.yaml", "kind: flood\ntarget: cart\n"))
    with pytest.raises(FaultFileError, match="direction"):
        load_fault_file(_write(tmp_path, "c.yaml", "kind: delay\ntarget: cart\ndirection: up\n"))
    with pytest.raises(FaultFileError, match="grid"):
        load_fault_file(_write(tmp_path, "d.yaml", "grid: {kinds: [cpu]}\n"))
    grid = load_fault_file(
        _write(tmp_path, "e.yaml", "grid: {kinds: [cpu, fd], targets: [cart, stock, payment]}\n")
    )
    assert [f.name for f in grid] == [
        "cpu-cart",
        "cpu-stock",
        "cpu-payment",
        "fd-cart",
        "fd-stock",
        "fd-payment",
    ]


def test_a_fault_whose_target_is_not_running_is_refused_before_it_starts() -> None:
    fault = next(f for f in load_faults(SHIPPED) if f.name == "cpu-stock")
    running = {"system": True, "processes": [{"name": "front"}], "services": ["front"]}
    with pytest.raises(LabError, match="targets stock, which is not in this lab"):
        check_target(fault, running)
    with pytest.raises(LabError, match="three-part shop"):
        check_target(fault, {"processes": [{"name": "stock"}]})
    check_target(fault, {"system": True, "processes": [{"name": "stock"}]})


def test_the_draw_is_reproducible_and_skips_what_the_lab_cannot_run() -> None:
    faults = load_faults(SHIPPED)
    first = draw(faults, sample=5, seed=7)
    assert [f.name for f in first] == [f.name for f in draw(faults, sample=5, seed=7)]
    assert len(first) == 5 and len({f.name for f in first}) == 5
    assert [f.name for f in draw(faults, sample=5, seed=8)] != [f.name for f in first]
    assert len(draw(faults, sample=None, seed=0)) == len(faults)
    kept, skipped = runnable(faults, disk=False)
    assert all(f.kind != "disk" for f in kept)
    assert skipped and all("size-limited disk" in line for line in skipped)


def test_the_control_file_is_bounded() -> None:
    body = switch("cpu", seconds=60, direction="inbound", disk=None, target="stock")
    assert body["child"][:3] == ["stress-ng", "--cpu", "2"] and "60s" in body["child"]
    parsed = Switch.parse({**body, "until": time.time() + 10_000, "delay_ms": 10**9})
    assert parsed.until <= time.time() + MAX_FAULT_S + 1
    assert parsed.delay_ms <= 30_000
    assert Switch.parse({"kind": "loss", "loss": 7}).loss == 1.0


def test_the_rules_pass_promtool_and_watch_the_mesh_per_service() -> None:
    rules = load_rules([], own=system_rules())
    names = {r["alert"] for g in rules.documents[0]["groups"] for r in g["rules"] if "alert" in r}
    assert {
        "IstioHigh5xxErrorRate",
        "IstioLatency99Percentile",
        "IstioHighClientErrorRate",
        "TargetDown",
        "HostHighCpuLoad",
        "HostOutOfMemory",
        "HostOutOfDiskSpace",
        "HostOomKillDetected",
        "RedisDown",
        "NginxDown",
        "ProcessFileDescriptorsExhausted",
    } <= names
    istio = next(g for g in rules.documents[0]["groups"] if g["name"] == "istio")
    assert all(
        "by (destination_workload" in r["expr"] or "source_workload" in r["expr"]
        for r in istio["rules"]
    )


def test_one_process_group_per_service() -> None:
    groups = process_groups(list(NAMES))["process_names"]
    by_name = {g["name"]: g for g in groups}
    assert set(NAMES) <= set(by_name)
    pattern = re.compile(by_name["stock"]["cmdline"][0])
    assert pattern.search("python -P -m lab.system.service --name stock --port 5")
    assert not pattern.search("python -P -m lab.system.service --name stocks --port 5")


def test_the_log_sources_name_every_service_and_parse(tmp_path: Path) -> None:
    text = system_log_sources(tmp_path, {"front": 8001, "stock": 8002}, kmsg=None)
    specs = parse_log_sources(text)
    assert {"front", "stock", "nginx", "redis", "postgres"} <= set(specs)
    assert specs["stock"].also == ["127.0.0.1:8002"]
    assert specs["nginx"].files is not None and len(specs["nginx"].files) == 2


def test_a_report_ranks_the_shops_services_in_the_order_it_names_them() -> None:
    text = "🔴 front is slow\n\nstock's own latency rose first; checkout waits on it\n\nredis fine"
    assert SYSTEM.mentions(text)[:3] == ["front", "stock", "checkout"]
    assert SYSTEM.mentions("front → /checkout") == ["front"]  # a route is not the service


@pytest.fixture
def payment() -> Iterator[tuple[str, Path, Path]]:
    """A real payment service with its control file (not written yet) and its log."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="whytree-system-fault-") as scratch:
        control = Path(scratch) / "payment.json"
        proc = start(
            "payment",
            [
                sys.executable,
                "-P",
                "-m",
                "lab.system.service",
                "--name",
                "payment",
                "--port",
                str(port),
                "--control",
                str(control),
            ],
            logs=Path(scratch),
            cwd=Path(__file__).resolve().parents[2],
        )
        try:
            yield f"http://127.0.0.1:{port}", control, Path(scratch) / "payment.log"
        finally:
            kill_group(proc.pid)
            assert not group_alive(proc.pid)


async def _status(http: aiohttp.ClientSession, url: str) -> int | str:
    try:
        async with http.get(url) as response:
            await response.read()
            return response.status
    except (aiohttp.ClientError, TimeoutError) as e:
        return type(e).__name__


async def _until(http: aiohttp.ClientSession, url: str, want: object, limit_s: float = 20) -> None:
    deadline = time.monotonic() + limit_s
    got: object = None
    while time.monotonic() < deadline:
        got = await _status(http, url)
        if got == want:
            return
        await asyncio.sleep(0.3)
    raise AssertionError(f"{url}: {got}, not {want}")


def _control(path: Path, **body: object) -> None:
    path.write_text(json.dumps({"until": time.time() + 60, **body}))


async def test_the_fault_switch_of_a_real_service_and_its_clearing(
    payment: tuple[str, Path, Path],
) -> None:
    url, control, log = payment
    timeout = aiohttp.ClientTimeout(total=3)
    # a connection per request: a service out of descriptors cannot accept a new one
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as http:
        await _until(http, url + "/charge", 200)
        _control(control, kind="exception", release="v2-bad")
        await _until(http, url + "/charge", 500)
        assert "KeyError: 'currency_rate'" in log.read_text()
        async with http.get(url + "/metrics") as response:
            assert 'app_build_info{version="v2-bad"} 1.0' in await response.text()
        control.unlink()
        await _until(http, url + "/charge", 200)
        _control(control, kind="loss", loss=1.0)
        await _until(http, url + "/charge", "ClientOSError")  # reset by peer
        control.unlink()
        await _until(http, url + "/charge", 200)
        _control(control, kind="fd", fds=True)
        await _until(http, url + "/charge", "TimeoutError")
        control.unlink()
        await _until(http, url + "/charge", 200)
        _control(control, kind="delay", delay_ms=1200, direction="inbound")
        await asyncio.sleep(1.5)
        started = time.monotonic()
        assert await _status(http, url + "/charge") == 200
        assert time.monotonic() - started >= 1.0
        # the service's own side never saw the wait: the request reached it late
        async with http.get(url + "/metrics") as response:
            text = await response.text()
        assert 'istio_request_duration_milliseconds_bucket{destination_service="payment"' in text
        control.write_text(json.dumps({"kind": "delay", "delay_ms": 8000, "until": time.time()}))
        await asyncio.sleep(1.0)
        started = time.monotonic()
        assert await _status(http, url + "/charge") == 200
        # a fault past its `until` is over: within the client's 3 s, far below its 8 s
        assert time.monotonic() - started < 3.0
    assert "fault delay ends" in log.read_text()


async def test_bench_live_system_refuses_a_target_not_in_the_lab_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "basket.yaml", "kind: cpu\ntarget: basket\n")
    parser = argparse.ArgumentParser()
    add_bench_parsers(parser.add_subparsers(dest="bench"))
    args = parser.parse_args(["live", "--system", "--faults", str(tmp_path), "--sample", "2"])
    assert await run_bench(load_settings(env_file=None), args) == 2
    err = capsys.readouterr().err
    assert "whytree bench live:" in err and "target 'basket' is not a service" in err


def test_the_system_report_gives_every_key_and_the_services_first_named() -> None:
    faults = [f for f in load_faults(SHIPPED) if f.name in ("exception-stock", "nothing-wrong")]
    row = {
        "fault": "exception-stock",
        "round": 0,
        "nothing_wrong": False,
        "alerts": ["IstioHigh5xxErrorRate"],
        "alerted": True,
        "reported": True,
        "fault_to_alert_s": 25.0,
        "alert_to_report_s": 6.0,
        "cause_ok": True,
        "component_ok": True,
        "false_cause": False,
        "wrong_cause": False,
        "component": "stock",
        "report": "🟢 front 5xx\n\nA bad release of stock: checkout and front fail behind it",
    }
    figures = summarise(faults, 1, [row])
    add_service_figures(figures, [row])
    for key in (
        "service_ac_at_1",
        "service_ac_at_3",
        "service_avg_at_5",
        "ac_at_1_cause",
        "wrong_causes",
        "false_causes",
        "p95_alert_to_report_s",
        "peers",
        "by_fault",
    ):
        assert key in figures, key
    assert figures["service_ac_at_1"] == 1.0 and figures["ac_at_1_cause"] == 1.0
    text = format_system_report({**figures, "drawn": [f.name for f in faults], "skipped": []})
    assert "service AC@1 1.0" in text and "exception-stock" in text
