"""The host and process-group runbooks against a real Prometheus over the exporters' output.

`tests/data/host_pack/lab*.om.gz` hold what the live lab's node_exporter and
prometheus-process-exporter wrote while faults ran (recorded with `whytree lab`, the
needed series only, every 10 s; `timeline.json` says when each fault began and which
alerts fired). A session
turns it into TSDB blocks with promtool and starts `prometheus` over them; each case is an
alert as Alertmanager would post it, mapped by the bundled mapping to its runbook and
parameters, investigated by DeepAnalyst with the runbook planner (no LLM) at the moment the
alert fired, and must name the cause and the component. `disk-filling.om.gz` holds
node_exporter over a disk filling steadily (the lab's disk fills at once). The
reports must read as an engineer writes them: bytes of the disk and since when it is full
or when it will be, one name per host whichever exporter saw it, the runbook by its
title. Skipped only when the prometheus/promtool binaries are missing.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.alerts import AlertRouter, RunbookIndex
from bot.alerts.expression import parse_expression
from bot.alerts.mapping import Investigation
from bot.alerts.payload import parse_notification
from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from fake_servers.alertmanager import alert, notification
from lab import config
from reasoning_core.models import Answer, Language, Tree
from reasoning_core.tree.report import Report, report_of
from tests.reasoning_core.answers.alert_analysis import (
    MAPPING,
    RUNBOOKS,
    analyse_alert,
    findings,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

DATA = Path(__file__).parents[2] / "data" / "host_pack"
TIMELINE: dict[str, Any] = json.loads((DATA / "timeline.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Case:
    """An alert at `moment` (a key of the timeline) + seconds; what the report must say."""

    name: str
    labels: dict[str, str]
    moment: str
    after_s: float
    runbook: str
    primary: str
    says: tuple[str, ...] = ()


LAB = TIMELINE["recordings"]["lab.om.gz"]
WINNING = TIMELINE["recordings"]["lab-cpu.om.gz"]
NODE, PROCESS, DISK = LAB["node_instance"], LAB["process_instance"], LAB["lab_disk"]
DEFAULTS = TIMELINE["recordings"]["node-defaults.om.gz"]
FILLING_DISK = TIMELINE["recordings"]["disk-filling.om.gz"]
THROTTLED = TIMELINE["recordings"]["lab-disk-throttled.om.gz"]
MOMENTS = {**LAB["moments"], **WINNING["moments"], **DEFAULTS["moments"],
           **FILLING_DISK["moments"], **THROTTLED["moments"]}  # fmt: skip

CASES = [
    # The lab's memory leak: the web group grows under its cgroup limit, the OOM killer ends it.
    Case("oom-kill", {"alertname": "HostOomKillDetected", "instance": NODE},
         "memory-leak", 40, "host_memory", "group_memory_growth", ("memory", "web")),
    # The lab's disk: 31 of its 32 MiB written at once.
    Case("disk-full", {"alertname": "HostOutOfDiskSpace", "instance": NODE, "mountpoint": DISK},
         "disk-full", 45, "host_disk", "sudden_fill", ("disk", DISK)),
    # stress-ng in the web group while other work kept the shared machine's two cores busy:
    # the group got under half a core, the CPU went to processes outside the lab's groups.
    Case("cpu-hog-outside", {"alertname": "HostHighCpuLoad", "instance": NODE},
         "cpu-hog-priority", 50, "host_cpu", "outside_groups", ("cpu",)),
    # stress-ng in the web group winning the CPU (the second recording): the group is named.
    Case("cpu-hog", {"alertname": "HostHighCpuLoad", "instance": WINNING["node_instance"]},
         "cpu-hog-winning", 50, "host_cpu", "process_group", ("cpu", "web")),
    Case("group-cpu", {"alertname": "ProcessHighCpu", "groupname": "web",
                       "instance": WINNING["process_instance"]},
         "cpu-hog-winning", 55, "process_group", "cpu_hog", ("cpu", "web")),
    # The web service killed and held down 90 s by its keeper (the group's oldest process,
    # so its start time does not change): the group's process count fell.
    Case("web-killed", {"alertname": "ProcessRestarted", "groupname": "web",
                        "instance": PROCESS},
         "web-killed", 75, "process_group", "crash_restart", ("killed", "127.0.0.1")),
    # The storage recording before its fault: every disk fast and idle, nothing stalled.
    Case("quiet-disk-io", {"alertname": "HostDiskIoUtilizationHigh",
                           "instance": THROTTLED["node_instance"]},
         "storage-quiet", 0, "host_disk_io", "none"),
    # node_exporter's default collectors on this machine: quiet network, and a clock the
    # kernel reports as not synchronised.
    Case("quiet-network", {"alertname": "HostNetworkReceiveErrors",
                           "instance": DEFAULTS["node_instance"]},
         "end", -5, "host_network", "none"),
    Case("clock-unsynchronised", {"alertname": "HostClockNotSynchronising",
                                  "instance": DEFAULTS["node_instance"]},
         "end", -5, "host_clock", "sync_stopped", ("synchronisation",)),
    # Nothing wrong yet (before the first fault): no cause.
    Case("quiet-memory", {"alertname": "HostOutOfMemory", "instance": NODE},
         "quiet", 0, "host_memory", "none"),
    Case("quiet-disk", {"alertname": "HostDiskMayFillIn24Hours", "instance": NODE,
                        "mountpoint": "/"},
         "quiet", 0, "host_disk", "none"),
    Case("quiet-group", {"alertname": "ProcessRestarted", "groupname": "web",
                         "instance": PROCESS},
         "quiet", 0, "process_group", "none"),
]  # fmt: skip


@pytest.fixture(scope="session")
async def prometheus_url() -> AsyncIterator[str]:
    scratch = Path(tempfile.mkdtemp(prefix="whytree-host-pack-"))
    try:
        for name in TIMELINE["recordings"]:
            text = scratch / name.removesuffix(".gz")
            with gzip.open(DATA / name, "rb") as packed:
                text.write_bytes(packed.read())
            build_tsdb(text, scratch / "tsdb")
        async with LocalPrometheus(scratch / "tsdb") as prom:
            yield prom.url
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def investigation_of(labels: dict[str, str]) -> Investigation:
    """An Alertmanager notification for one firing alert, mapped as the receiver maps it."""
    body = json.dumps(notification([alert(labels)])).encode()
    [parsed] = parse_notification(body).alerts
    found = MAPPING.resolve(parsed.labels)
    assert isinstance(found, Investigation), found
    return found


async def investigate(
    pool: asyncpg.Pool[Any], url: str, found: Investigation, now: datetime, language: Language
) -> tuple[Answer, Tree | None]:
    """As the alert worker does: the mapped runbook and parameters, the question's words."""
    return await analyse_alert(pool, url, found, now, language=language)


def moment(name: str, after_s: float) -> datetime:
    return datetime.fromtimestamp(MOMENTS[name] + after_s, UTC)


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
async def test_each_runbook_names_the_recorded_cause(
    pool: asyncpg.Pool[Any], prometheus_url: str, case: Case, language: Language
) -> None:
    found = investigation_of(case.labels)
    assert found.runbook == case.runbook
    answer, tree = await investigate(
        pool, prometheus_url, found, moment(case.moment, case.after_s), language
    )
    assert answer.synthesis is not None, findings(answer, tree)
    assert answer.synthesis.primary.id == case.primary, findings(answer, tree)
    if language == "en":
        low = answer.text.lower()
        for word in case.says:
            assert word.lower() in low, findings(answer, tree)
    else:  # the component is named in Russian too
        for word in case.says[1:]:
            assert word in answer.text, findings(answer, tree)
    if case.primary == "cpu_hog":  # the primary cause names the group, not only its host
        assert "web" in answer.synthesis.primary.title, answer.synthesis.primary.title


async def test_a_window_before_the_data_says_there_is_no_data(
    pool: asyncpg.Pool[Any], prometheus_url: str
) -> None:
    found = investigation_of({"alertname": "HostOomKillDetected", "instance": NODE})
    early = moment("quiet", 0) - timedelta(hours=3)
    answer, tree = await investigate(pool, prometheus_url, found, early, "en")
    assert answer.synthesis is None or answer.synthesis.primary.id != "group_memory_growth", (
        findings(answer, tree)
    )


async def test_the_mapped_runbook_runs_whatever_the_question_s_words_match(
    pool: asyncpg.Pool[Any], prometheus_url: str
) -> None:
    """An alert's runbook comes from the mapping: a question worded for another runbook
    (here CPU, which host_cpu and service_saturation match) still runs host_disk."""
    found = investigation_of({"alertname": "HostOutOfDiskSpace", "instance": NODE})
    worded = Investigation(
        runbook=found.runbook, parameters=found.parameters,
        questions={"en": "why is the cpu of this service throttled?"},
    )  # fmt: skip
    answer, tree = await investigate(pool, prometheus_url, worded, moment("disk-full", 30), "en")
    assert answer.synthesis is not None, findings(answer, tree)
    assert answer.synthesis.primary.id == "sudden_fill", findings(answer, tree)


# --- what the engineer reads ---------------------------------------------------------

HOST = NODE.rsplit(":", 1)[0]
FULL = {
    "en": rf"{HOST} · disk {DISK}: \d+(\.\d)? (KiB|MiB) free of 32 MiB \(9\d% used\), "
    r"full since \d\d:\d\d UTC",
    "ru": rf"{HOST} · диск {DISK}: \d+(\.\d)? (КиБ|МиБ) свободно из 32 МиБ \(занято 9\d%\), "
    r"заполнен с \d\d:\d\d UTC",
}
FILLING_AT = FILLING_DISK["lab_disk"]
FILLING = {
    "en": rf"{HOST} · disk {FILLING_AT}: \d+(\.\d)? MiB free of 64 MiB \(8\d% used\), "
    r"full in about \d+ min at (19|20|21) KiB/s",
    "ru": rf"{HOST} · диск {FILLING_AT}: \d+(\.\d)? МиБ свободно из 64 МиБ \(занято 8\d%\), "
    r"заполнится примерно через \d+ мин при (19|20|21) КиБ/с",
}
CHECKED_BY = {
    "en": "checked by the runbook «A host's disk is full or filling up»",
    "ru": "проверено по ранбуку «Диск хоста заполнен или заполняется»",
}


async def report_at(
    pool: asyncpg.Pool[Any], url: str, labels: dict[str, str], at: datetime, language: Language
) -> tuple[Report, Answer, Tree | None]:
    answer, tree = await investigate(pool, url, investigation_of(labels), at, language)
    report = report_of(answer)
    assert report is not None, findings(answer, tree)
    return report, answer, tree


def no_share_out_of_range(text: str) -> None:
    """No negative percentage and no share above 100 % anywhere in the report."""
    for number in re.findall(r"([−-]?\d+(?:\.\d+)?)\s?%", text):
        assert 0 <= float(number.replace("−", "-")) <= 100, (number, text)


@pytest.mark.parametrize("language", ["en", "ru"])
async def test_a_full_disk_reads_as_bytes_free_of_its_size_and_since_when(
    pool: asyncpg.Pool[Any], prometheus_url: str, language: Language
) -> None:
    labels = {"alertname": "HostOutOfDiskSpace", "instance": NODE, "mountpoint": DISK}
    report, answer, tree = await report_at(
        pool, prometheus_url, labels, moment("disk-full", 45), language
    )
    assert report.symptom is not None and re.fullmatch(FULL[language], report.symptom), findings(
        answer, tree
    )
    assert report.checked_by == CHECKED_BY[language]
    no_share_out_of_range(answer.text)
    # the burst's share of the disk as a percentage beside its limit, not "0.969 vs 0.200"
    limit = "при пороге" if language == "ru" else "vs limit"
    assert any(re.search(rf"\d+\.\d% {limit} 20\.0%", line) for line in report.evidence), findings(
        answer, tree
    )


@pytest.mark.parametrize("language", ["en", "ru"])
async def test_a_filling_disk_says_when_it_will_be_full_and_how_fast(
    pool: asyncpg.Pool[Any], prometheus_url: str, language: Language
) -> None:
    """Eight minutes into a log growing by 20 KiB/s on a 64 MiB disk."""
    labels = {"alertname": "HostDiskMayFillIn24Hours", "instance": FILLING_DISK["node_instance"],
              "mountpoint": FILLING_AT}  # fmt: skip
    at = moment("filling", 480)
    report, answer, tree = await report_at(pool, prometheus_url, labels, at, language)
    assert answer.synthesis is not None and answer.synthesis.primary.id == "steady_growth", (
        findings(answer, tree)
    )
    assert report.symptom is not None and re.fullmatch(FILLING[language], report.symptom), (
        findings(answer, tree)
    )
    no_share_out_of_range(answer.text)


@pytest.mark.parametrize("language", ["en", "ru"])
async def test_a_host_seen_by_two_exporters_has_one_name(
    pool: asyncpg.Pool[Any], prometheus_url: str, language: Language
) -> None:
    """node_exporter (NODE) and process-exporter (PROCESS) on one machine, on two ports:
    both reports name the host the same, and neither shows an exporter's port."""
    assert NODE.rsplit(":", 1)[0] == PROCESS.rsplit(":", 1)[0] and NODE != PROCESS
    disk, disk_answer, _ = await report_at(
        pool, prometheus_url,
        {"alertname": "HostOutOfDiskSpace", "instance": NODE, "mountpoint": DISK},
        moment("disk-full", 45), language,
    )  # fmt: skip
    group, group_answer, tree = await report_at(
        pool, prometheus_url,
        {"alertname": "ProcessRestarted", "groupname": "web", "instance": PROCESS},
        moment("web-killed", 75), language,
    )  # fmt: skip
    host_word = "хост" if language == "ru" else "host"
    assert disk.symptom is not None and disk.symptom.startswith(f"{HOST} · ")
    assert f"{host_word} {HOST}" in group.primary, findings(group_answer, tree)
    for text in (disk_answer.text, group_answer.text, disk.symptom, group.symptom or ""):
        assert NODE not in text and PROCESS not in text, text


# --- storage: a limit before the disk (lab/faults/pg-disk-throttled) ----------------------

THROTTLED_AT = THROTTLED["alerts_fired"]["pg-disk-throttled"]["HostIoPressureHigh"]


def io_pressure_alert() -> Investigation:
    """The lab's own PSI rule as the receiver routes it: no mapping entry, its expression
    (lab/config.py RULES) reads node_pressure_io_waiting_seconds_total."""
    rules = {r["alert"]: r["expr"] for g in config.RULES["groups"] for r in g["rules"]}
    router = AlertRouter(mapping=MAPPING, index=RunbookIndex(RUNBOOKS.runbooks.values()))
    labels = {"alertname": "HostIoPressureHigh", "instance": THROTTLED["node_instance"]}
    found = router.resolve(labels, parse_expression(rules["HostIoPressureHigh"]))
    assert isinstance(found, Investigation), found
    return found


@pytest.mark.parametrize("language", ["en", "ru"])
async def test_a_throttle_before_the_disk_is_told_from_a_slow_disk(
    pool: asyncpg.Pool[Any], prometheus_url: str, language: Language
) -> None:
    """PostgreSQL's writes throttled by a blkio cgroup: the tasks stall on I/O while vda
    answers in milliseconds, so the disk is not the slow part; what waits is named (the
    postgres group, a process in state D), and the report says the wait is before the disk."""
    found = io_pressure_alert()
    assert found.runbook == "host_disk_io"
    at = moment("pg-disk-throttled", THROTTLED_AT)
    report, answer, tree = await report_at_investigation(pool, prometheus_url, found, at, language)
    assert answer.synthesis is not None, findings(answer, tree)
    assert answer.synthesis.primary.id == "io_limited", findings(answer, tree)
    assert not answer.synthesis.not_established, findings(answer, tree)
    group = "группа процессов postgres" if language == "ru" else "process group postgres"
    assert group in report.primary, findings(answer, tree)
    lines = findings(answer, tree)
    # the disk's own time per write measured, in milliseconds, and well under 20 ms
    fast = (
        r"True время на запись у самого медленного диска \(последнее\) \d\.\d мс"
        r" при пороге 20\.0 мс"
        if language == "ru"
        else r"True slowest disk's time per write last \d\.\d ms vs limit 20\.0 ms"
    )
    assert re.search(fast, lines), lines
    no_share_out_of_range(answer.text)


async def test_the_storage_runbook_sees_nothing_before_the_throttle(
    pool: asyncpg.Pool[Any], prometheus_url: str
) -> None:
    """The same alert routed the same way, ten seconds before the fault: nothing stalls."""
    found = io_pressure_alert()
    answer, tree = await investigate(pool, prometheus_url, found, moment("storage-quiet", 0), "en")
    assert answer.synthesis is not None and answer.synthesis.primary.id == "none", findings(
        answer, tree
    )


async def report_at_investigation(
    pool: asyncpg.Pool[Any], url: str, found: Investigation, at: datetime, language: Language
) -> tuple[Report, Answer, Tree | None]:
    answer, tree = await investigate(pool, url, found, at, language)
    report = report_of(answer)
    assert report is not None, findings(answer, tree)
    return report, answer, tree
