"""The system lab's pieces that need no server: a series' service, how a report names
services, RCAEval's service ranking and AC@k / Avg@5, counters as rates, the bound on
series, the frame's CSV as RCAEval reads it, and the figures `bench live --peers` adds."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from lab.system.beside import add_peer_figures, format_peers
from lab.system.export import Frame, _choose, _is_counter, _rates
from lab.system.parts import THREE_PART, service_name
from lab.system.peers import PEERS, PeersUnavailableError, peers_python, rank, service_ranks
from lab.system.scoring import accuracy, service_figures, whytree_ranks


def test_a_series_service_comes_from_its_group_else_its_job() -> None:
    assert THREE_PART.service_of({"job": "process", "groupname": "db-proxy"}) == "db-proxy"
    assert THREE_PART.service_of({"job": "process"}) == "process-exporter"
    assert THREE_PART.service_of({"job": "blackbox", "instance": "http://x/checkout"}) == "web"
    assert THREE_PART.service_of({"job": "postgres"}) == "postgres"
    # RCAEval reads a column's service up to its first underscore: none in a name
    assert THREE_PART.service_of({"job": "my_job"}) == "my-job"
    assert service_name("Cart_Service") == "cart-service"


def test_a_faults_component_is_a_service() -> None:
    assert THREE_PART.service_of_component("/checkout") == "web"
    assert THREE_PART.service_of_component("disk") == "node"
    assert THREE_PART.service_of_component("db-proxy") == "db-proxy"


def test_a_report_ranks_its_primary_causes_service_first() -> None:
    report = (
        "🔴 web /checkout slow\n\n"
        "Primary cause: a slow network path to the database: groupname db-proxy (0.45)\n\n"
        "Secondary: PostgreSQL lock waits; web-killed is not a name of the web service.\n"
        "What changed first: postgres (pg_locks rose), disk"
    )
    assert whytree_ranks(THREE_PART, report) == ["db-proxy", "web", "postgres", "node"]
    assert whytree_ranks(THREE_PART, None) == []
    # a word that merely contains a service's name does not name it
    assert THREE_PART.mentions("webhook to the postgresql-ish nodes") == []


def test_rcaevals_service_ranking_keeps_each_service_where_it_first_appears() -> None:
    columns = ["stock_cpu", "stock_mem", "cart-db_latency", "cart_cpu", "front_latency"]
    assert service_ranks(columns) == ["stock", "cart", "front"]


def test_ac_at_k_and_avg_at_5() -> None:
    windows = [("a", ["a", "b"]), ("b", ["a", "c", "b"]), ("c", ["x"]), ("d", [])]
    assert accuracy(windows, 1) == 0.25
    assert accuracy(windows, 3) == 0.5
    # AC@1..5: .25, .25, .5, .5, .5
    assert service_figures(windows) == {
        "service_ac_at_1": 0.25,
        "service_ac_at_3": 0.5,
        "service_avg_at_5": 0.4,
    }
    assert service_figures([])["service_ac_at_1"] is None


def test_counters_become_per_second_rates_and_a_reset_counts_from_zero() -> None:
    assert _rates([0.0, 10.0, 30.0, None, 40.0, 5.0], 5.0) == [None, 2.0, 4.0, None, None, 1.0]
    assert _is_counter("http_requests_total", {})
    assert _is_counter("x_seconds_count", {"x_seconds": "histogram"})
    assert not _is_counter("node_memory_bytes", {})
    assert not _is_counter("up_total_but_gauge", {"up_total_but_gauge": "gauge"})


def test_series_past_the_bound_are_left_out_whole_with_a_note() -> None:
    listed = [{"__name__": "a", "i": str(i)} for i in range(3)] + [
        {"__name__": "b", "i": str(i)} for i in range(5)
    ]
    chosen, notes = _choose(listed, 4)
    assert list(chosen) == ["a"] and len(chosen["a"]) == 3
    assert notes == ["1 metrics left out past 4 series: b…"]


def test_the_frame_is_written_as_rcaevals_data_csv(tmp_path: Path) -> None:
    frame = Frame(
        times=[100.0, 105.0],
        columns={"web_cpu": [0.25, None], "postgres_mem": [1e6, 2.5e6]},
    )
    path = frame.write_csv(tmp_path / "data.csv")
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    assert rows == [
        ["time", "postgres_mem", "web_cpu"],
        ["100", "1000000", "0.25"],
        ["105", "2500000", ""],
    ]
    assert frame.services() == ["postgres", "web"]


def test_a_missing_peers_environment_says_how_to_make_it(tmp_path: Path) -> None:
    with pytest.raises(PeersUnavailableError, match="make peers"):
        peers_python(tmp_path / "none")


def _row(fault: str, service: str, mine: list[str], baro: list[str], **extra: Any) -> Any:
    return {
        "fault": fault,
        "service": service,
        "whytree_services": mine,
        "peers": {"baro": {"services": baro}, "nsigma": {"error": "exited 1", "services": []}},
        **extra,
    }


def test_the_peers_figures_beside_whytrees() -> None:
    rows = [
        _row("cpu-hog", "web", ["web"], ["postgres", "web"]),
        _row("slow-db", "db-proxy", ["db-proxy", "postgres"], ["postgres", "web", "node"]),
        {"fault": "nothing-wrong", "nothing_wrong": True},
    ]
    figures: dict[str, Any] = {"by_fault": {"cpu-hog": {}, "slow-db": {}, "nothing-wrong": {}}}
    add_peer_figures(figures, rows)
    assert figures["service_ac_at_1"] == 1.0
    assert figures["peers"]["baro"]["service_ac_at_1"] == 0.0
    assert figures["peers"]["baro"]["service_ac_at_3"] == 0.5
    assert figures["peers"]["nsigma"] == {
        "service_ac_at_1": 0.0,
        "service_ac_at_3": 0.0,
        "service_avg_at_5": 0.0,
        "errors": 2,
    }
    slow = figures["by_fault"]["slow-db"]["services"]
    assert slow["service"] == "db-proxy"
    assert slow["whytree"]["first"] == ["db-proxy"] and slow["baro"]["first"] == ["postgres"]
    assert slow["nsigma"]["first"] == ["-"]
    assert "services" not in figures["by_fault"]["nothing-wrong"]
    lines = "\n".join(format_peers(figures))
    assert "whytree  service AC@1 1.0" in lines and "baro     service AC@1 0.0" in lines
    assert "slow-db" in lines and "first: whytree db-proxy, baro postgres, nsigma -" in lines


async def test_a_runner_that_answers_nothing_or_fails_is_an_error_per_method() -> None:
    frame = Frame(times=[100.0, 105.0], columns={"web_cpu": [0.1, 0.2]})
    silent = await rank(frame, 100.0, python=Path("/bin/true"))
    assert {m: a.error for m, a in silent.items()} == dict.fromkeys(
        PEERS, "no JSON answer from the peers' runner"
    )
    failed = await rank(frame, 100.0, python=Path("/bin/false"), methods=("baro",))
    assert failed["baro"].error == "exited 1: no output" and failed["baro"].services == []
