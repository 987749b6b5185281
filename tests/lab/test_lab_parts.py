"""The lab's parts without the lab's programs: fault files, state, process groups, refusals."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from lab import config
from lab.bench import summarise
from lab.fault import (
    FAULTS_DIR,
    FaultFileError,
    clear,
    find_fault,
    inject,
    load_fault,
    load_faults,
)
from lab.lab import Lab, LabError
from lab.processes import group_alive, start
from lab.report_score import first_candidate, first_report, scan_used, score, wrong_cause

SHIPPED = {
    "cpu-hog", "memory-leak", "disk-full", "web-killed", "pg-lock", "pg-connections",
    "slow-db", "bad-release", "nothing-wrong", "pg-disk-throttled",
}  # fmt: skip


def test_every_shipped_fault_loads_and_says_what_to_expect() -> None:
    faults = load_faults()
    assert {f.name for f in faults} == SHIPPED
    for fault in faults:
        assert fault.start.strip() and fault.duration_s <= 900
        if fault.name == "nothing-wrong":
            assert fault.nothing_wrong and fault.component is None
        else:
            assert fault.cause_terms and fault.component, fault.name


def test_a_fault_file_missing_a_field_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"name": "x", "breaks": "y"}))
    with pytest.raises(FaultFileError, match="missing field start"):
        load_fault(bad)


def test_inject_on_a_lab_that_is_down_says_so(tmp_path: Path) -> None:
    with pytest.raises(LabError, match="the lab is down"):
        inject(Lab(tmp_path / "lab"), find_fault("cpu-hog"))
    assert not Lab(tmp_path / "lab").status().up


def _fake_lab(tmp_path: Path) -> Lab:
    """A lab state with one real process (a shell and its child), as `up` records them."""
    lab = Lab(tmp_path / "lab")
    lab.state.write({"root": str(lab.root), "ports": {"prometheus": 1, "web": 2, "pg": 3},
                     "processes": [], "fault": None})  # fmt: skip
    lab.state.add_proc(start("sleeper", ["bash", "-c", "sleep 60 & wait"], logs=lab.logs))
    return lab


def test_status_reports_a_dead_process_and_down_kills_whole_groups(tmp_path: Path) -> None:
    lab = _fake_lab(tmp_path)
    doomed = start("doomed", ["sleep", "0"], logs=lab.logs)
    lab.state.add_proc(doomed)
    for _ in range(300):  # until it has exited (30 s at most: a busy machine is slow)
        status = lab.status()
        if status.dead:
            break
        time.sleep(0.1)
    assert status.dead == ["doomed"]
    sleeper = lab.read()["processes"][0]["pid"]
    assert group_alive(sleeper)
    assert "sleeper" in lab.down()
    assert not group_alive(sleeper) and not lab.state.exists()


def test_a_fault_whose_stop_fails_is_cleared_all_the_same(tmp_path: Path) -> None:
    lab = _fake_lab(tmp_path)
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump({
        "name": "broken", "breaks": "nothing", "start": "sleep 60 & sleep 60", "stop": "exit 3",
        "expected": {"cause": "x", "component": "y"},
    }))  # fmt: skip
    pgid = inject(lab, load_fault(broken))
    time.sleep(0.3)
    assert group_alive(pgid)
    note = clear(lab)
    assert note is not None and "failed" in note
    assert not group_alive(pgid) and lab.read()["fault"] is None
    pgid = inject(lab, load_fault(broken))
    lab.down()  # a fault still running is killed by down too
    assert not group_alive(pgid)


def test_every_listener_is_on_loopback() -> None:
    ports = {n: 1000 + i for i, n in enumerate(
        ("prometheus", "alertmanager", "node", "process", "blackbox", "postgres_exporter", "web")
    )}  # fmt: skip
    prom = config.prometheus(ports, FAULTS_DIR / "rules.yml")
    targets = [
        t for job in prom["scrape_configs"] for c in job["static_configs"] for t in c["targets"]
    ]
    assert all("127.0.0.1" in t for t in targets)
    am = config.alertmanager("http://127.0.0.1:9/alerts/alertmanager", "secret")
    assert (
        am["receivers"][0]["webhook_configs"][0]["http_config"]["authorization"]["credentials"]
        == "secret"
    )
    names = {r["alert"] for g in config.RULES["groups"] for r in g["rules"]}
    assert {"HostHighCpuLoad", "HostOomKillDetected", "HostOutOfDiskSpace", "TargetDown",
            "BlackboxProbeFailed", "PostgresqlTooManyConnections"} <= names  # fmt: skip


def test_the_bench_scores_the_report_never_the_alerts_header() -> None:
    """The header names the alert and its labels ("PostgresqlTooManyConnections … postgres"),
    which would pass for the cause: only the report that follows it is scored."""
    fault = find_fault("pg-connections")
    header = "🔔 <b>PostgresqlTooManyConnections</b> is firing: instance=pg:9187, job=postgres"
    assert score(fault, header) == (True, True)  # why the header must never be scored
    report = "Primary cause: lock waits on PostgreSQL — confidence high (0.91)"
    messages = [(1.0, header), (2.0, report)]
    assert first_report(messages) == (2.0, report)
    assert score(fault, report) == (False, True)
    assert first_report([(1.0, header)]) is None


def test_the_bench_scores_the_primary_cause_not_the_evidence_below_it() -> None:
    """AC@1 is the primary cause's: a secondary factor or an evidence line that names the
    fault's cause does not make a wrong primary cause right."""
    fault = find_fault("pg-lock")
    wrong = (
        "<b>web · p95 latency 4.58 (limit 1); route /checkout</b>\n\n"
        "<b>Primary cause:</b> PostgreSQL connections exhausted: instance pg:9187\n\n"
        "<b>Secondary factors</b>\n• PostgreSQL lock waits (0.80)\n\n"
        "<b>Evidence</b>\n• confirmed: lock waits last 9.0 vs limit 2.5"
    )
    assert score(fault, wrong) == (False, True), "postgres named in the primary cause"
    right = wrong.replace("connections exhausted", "lock waits")
    assert score(fault, right) == (True, True)
    unsure = right.replace(
        "<b>Primary cause:</b>", "<b>Cause not established — best candidate:</b>"
    )
    assert score(fault, unsure) == (False, False)
    assert score(find_fault("cpu-hog"), "<b>web · CPU cores 1.6</b>\n\nThe group eats CPU") == (
        True,
        True,
    ), "the component may be the headline's subject"


def test_the_holdout_folders_load_apart_from_the_shipped_faults() -> None:
    first = load_faults(FAULTS_DIR / "holdout")
    second = load_faults(FAULTS_DIR / "holdout2")
    third = load_faults(FAULTS_DIR / "holdout3")
    fourth = load_faults(FAULTS_DIR / "holdout4")
    fifth = load_faults(FAULTS_DIR / "holdout5")
    sixth = load_faults(FAULTS_DIR / "holdout6")
    seventh = load_faults(FAULTS_DIR / "holdout7")
    eighth = load_faults(FAULTS_DIR / "holdout8")
    ninth = load_faults(FAULTS_DIR / "holdout9")
    tenth = load_faults(FAULTS_DIR / "holdout10")
    assert {f.name for f in second} == {"pg-frozen", "web-hung", "web-crash-loop", "db-path-flap"}
    assert {f.name for f in third} == {"web-exit-loop", "web-slow-loop"}
    assert {f.name for f in fourth} == {"pg-cpu-burn", "proxy-frozen", "pg-migration-lock"}
    assert {f.name for f in fifth} == {"web-fd-limit", "pg-read-only", "pg-login-revoked"}
    assert {f.name for f in sixth} == {"pg-table-renamed", "pg-write-revoked", "slow-release"}
    assert {f.name for f in seventh} == {
        "pg-role-conn-limit",
        "pg-backend-killer",
        "pg-slow-trigger",
        "proxy-stalls",
    }
    assert {f.name for f in eighth} == {
        "pg-check-constraint",
        "web-stop-loop",
        "pg-periodic-lock",
        "pg-postmaster-stopped",
    }
    assert {f.name for f in ninth} == {
        "pg-sync-standby",
        "pg-crash-loop",
        "proxy-fd-limit",
        "web-port-squatter",
    }
    assert {f.name for f in tenth} == {
        "pg-slow-writes",
        "pg-sync-standby-any",
        "pg-exporter-frozen",
        "web-port-taken",
        "pg-integer-overflow",
        "web-request-storm",
        "web-cpu-quota",
        "pg-lock-queue",
    }
    holdouts = [*first, *second, *third, *fourth, *fifth, *sixth, *seventh, *eighth, *ninth]
    holdouts += tenth
    names = [f.name for f in [*load_faults(), *holdouts]]
    assert len(names) == len(set(names))  # no holdout repeats a shipped fault
    for fault in [*second, *third, *fourth, *fifth, *sixth, *seventh, *eighth, *ninth, *tenth]:
        assert fault.cause_terms and fault.component and fault.duration_s <= 900, fault.name


_FROZEN_PG = (
    "<b>web · p95 latency 4.00 (limit 1); route /checkout</b>\n\n"
    "<b>Primary cause:</b> A slow network path to the database · "
    "<i>🟡 medium confidence (0.67)</i>\n\n"
    "<b>Evidence</b>\n• confirmed: busy PostgreSQL sessions 1.0 — PostgreSQL itself idle"
)


def test_a_wrong_cause_stated_with_confidence_is_counted() -> None:
    """Issue 37's first fault: PostgreSQL frozen, the report blames the path at 🟡 0.67."""
    frozen = next(f for f in load_faults(FAULTS_DIR / "holdout2") if f.name == "pg-frozen")
    assert wrong_cause(frozen, _FROZEN_PG)
    assert score(frozen, _FROZEN_PG) == (False, False)
    assert not wrong_cause(
        frozen, _FROZEN_PG.replace("🟡 medium", "🔴 low").replace("0.67", "0.45")
    ), "a low-confidence guess is not a wrong cause stated with confidence"
    right = _FROZEN_PG.replace("A slow network path to the database",
                               "PostgreSQL is not responding (hung)")  # fmt: skip
    assert not wrong_cause(frozen, right) and score(frozen, right) == (True, True)
    unsure = _FROZEN_PG.replace("<b>Primary cause:</b>",
                                "<b>Cause not established — best candidate:</b>")  # fmt: skip
    assert not wrong_cause(frozen, unsure)
    plain = "Primary cause: CPU saturation — confidence high (0.88)"
    assert wrong_cause(frozen, plain), "the plain-text report's number says how sure"
    assert not wrong_cause(frozen, "Primary cause: CPU saturation — confidence low (0.30)")
    assert not wrong_cause(frozen, None)
    nothing = find_fault("nothing-wrong")
    assert not wrong_cause(nothing, plain), "a nothing-wrong window counts false causes"


def test_wrong_causes_are_summed_overall_and_by_fault() -> None:
    faults = load_faults(FAULTS_DIR / "holdout2")
    row = {"nothing_wrong": False, "reported": True, "alerts": ["X"], "alerted": True,
           "fault_to_alert_s": 10.0, "alert_to_report_s": 5.0, "cause_ok": False,
           "component_ok": False, "false_cause": False}  # fmt: skip
    rows = [
        {**row, "fault": "pg-frozen", "round": 0, "wrong_cause": True},
        {**row, "fault": "pg-frozen", "round": 1, "wrong_cause": False, "cause_ok": True},
        {**row, "fault": "web-hung", "round": 0, "wrong_cause": True},
    ]
    figures = summarise(faults, 2, rows)
    assert figures["wrong_causes"] == 2 and figures["false_causes"] == 0
    assert figures["by_fault"]["pg-frozen"]["wrong_causes"] == 1
    assert figures["by_fault"]["db-path-flap"]["wrong_causes"] == 0


def test_the_change_scans_part_in_a_report_is_read_in_both_languages() -> None:
    en = (
        "🔔 … No runbook for alert PgBackendsPileUp\n\nwhat changed first: postgres "
        "(pg_stat_activity_count rose from 14:01:05), web (… fell from 14:01:20); "
        "looked at 412 series of 6 targets"
    )
    ru = "что изменилось первым: db-proxy (namedprocess_… выросла с 14:01:05)"
    quiet = "looked at 412 series of 6 targets; none changed before the symptom"
    assert first_candidate(en) == "postgres" and first_candidate(ru) == "db-proxy"
    assert first_candidate(quiet) is None and scan_used(quiet) and scan_used(en)
    assert not scan_used("Primary cause: CPU saturation") and not scan_used(None)


def test_log_quotes_are_counted_apart_where_the_software_logs_the_fault() -> None:
    faults = load_faults()
    logged = {f.name for f in faults if f.logged}
    assert {"bad-release", "pg-connections", "pg-lock"} <= logged
    assert "cpu-hog" not in logged  # nothing the lab runs writes a line about a busy CPU
    row = {"nothing_wrong": False, "reported": True, "alerts": ["X"], "alerted": True,
           "fault_to_alert_s": 10.0, "alert_to_report_s": 5.0, "cause_ok": True,
           "component_ok": True, "false_cause": False, "round": 0}  # fmt: skip
    rows = [
        {**row, "fault": "bad-release", "logged": True, "quotes_log": True},
        {**row, "fault": "pg-lock", "logged": True, "quotes_log": False},
        {**row, "fault": "cpu-hog", "logged": False, "quotes_log": False},
        {**row, "fault": "nothing-wrong", "nothing_wrong": True, "scan_candidate": "web"},
        {**row, "fault": "web-killed", "logged": True, "quotes_log": True,
         "scan_used": True, "scan_component_first": True},
    ]  # fmt: skip
    figures = summarise(faults, 1, rows)
    assert figures["reports_quoting_logs"] == 0.5
    assert figures["reports_quoting_logs_where_logged"] == 0.667
    assert figures["scan_used"] == 1 and figures["scan_component_first"] == 0.25
    assert figures["scan_candidates_when_nothing_wrong"] == 1
