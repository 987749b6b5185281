"""`whytree bench live`: every fault file, injected into a real lab, scored on what whytree
posted to a fake Telegram chat.

The real bot (runbook planner, no LLM; PROMETHEUS_URL = the lab's Prometheus) runs on a
scratch PostgreSQL with its receiver on a free loopback port; a lab is started in a
scratch directory with Alertmanager posting there, and left 7 min with no fault (the
baseline the change scan and the runbooks read). For each fault and round: inject,
wait for an alert to fire in Alertmanager (up to the fault's `show_s` + 60 s), wait for
whytree's message in the chat (up to 120 s more), clear, let the lab settle: 30 s, then
until Alertmanager holds no alert that was not firing before the first fault (at most
4 min more), so that a fault never inherits the last one's open alert group.

Scoring: a fault's round is right on the cause when the primary cause of whytree's first
report after the fault (never the alert's header before it, never the secondary factors or
evidence below it) names one of its `cause_terms`, and right on the component when its
headline or primary cause names the expected component; a "no runbook" or "not
established" report names no cause. In a nothing-wrong window any message
that names a cause is a false cause. In a fault window, a report whose primary cause names
a cause that is not the fault's, at medium confidence or above (🟡 or 🟢), is a wrong
cause: the worst answer, a wrong cause stated with confidence.
"""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp

from lab.fault import Fault, clear, inject, load_faults
from lab.lab import Lab
from lab.report_score import (
    first_candidate,
    first_report,
    names_cause,
    scan_used,
    score,
    wrong_cause,
)
from lab.rules import LabRules
from lab.system.beside import add_peer_figures, format_peers, rank_windows
from lab.system.parts import THREE_PART

logger = logging.getLogger(__name__)

CHAT = -100777
TOKEN = "bench-live-token"
_ALERT_WAIT_MARGIN_S = 60.0
_REPORT_WAIT_S = 120.0
_SETTLE_S = 30.0
#: Normal data before the first fault: a real Prometheus holds hours of it; the change scan
#: compares the incident with the minutes before — its window opens 150 s before the alert,
#: and 8 samples (at the lab's 5 s scrape) before that — so a first fault injected 3 min
#: after the lab started had 30 s of baseline to stand out from, and at 4 min its baseline
#: was the lab's start-up: PostgreSQL's first writes settling read as "postgres fell" in the
#: first fault's window (stop 48). Seven minutes leave 4 of settled baseline.
_WARM_UP_S = 420.0
_SETTLE_LIMIT_S = 240.0


async def firing_alerts(alertmanager_url: str) -> set[str]:
    """Alert names Alertmanager holds active now."""
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http,
            http.get(f"{alertmanager_url}/api/v2/alerts?active=true&silenced=false") as response,
        ):
            alerts = await response.json()
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return set()
    return {str(a["labels"].get("alertname", "")) for a in alerts}


@contextmanager
def cancelled_on_sigterm() -> Iterator[None]:
    """SIGTERM (and SIGHUP) cancel the running task instead of killing the process, so its
    `finally` runs: a bench stopped with `kill` takes its lab down as at the end of its run,
    not leaving Prometheus, the exporters and the load running. Restored on leaving."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    signals = (signal.SIGTERM, signal.SIGHUP)
    for sig in signals:
        loop.add_signal_handler(sig, task.cancel)
    try:
        yield
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


async def run_live_bench(
    *,
    bot_factory: Any,
    faults_dir: Path | None,
    rounds: int,
    quick: bool = False,
    rules: LabRules | None = None,
    peers: Path | None = None,
) -> dict[str, Any]:
    """`bot_factory(receiver_setup)` is an async context manager yielding
    (receiver_url, messages_since): the bot under test and its chat. `rules`: rule files
    the lab loads instead of its own (`--rules`, `--max-for`; lab/rules.py). `peers`: the
    peers' interpreter: RCAEval's BARO and N-Sigma ranked on every fault window, all three
    scored by service (`--peers`, lab/system/beside.py)."""
    faults = load_faults(faults_dir) if faults_dir else load_faults()
    settle = 5.0 if quick else _SETTLE_S
    results: list[dict[str, Any]] = []
    with cancelled_on_sigterm(), tempfile.TemporaryDirectory(prefix="whytree-lab-") as scratch:
        lab = Lab(Path(scratch) / "lab")
        async with bot_factory(lab) as (receiver_url, messages_since):
            await asyncio.to_thread(lab.up, receiver_url=receiver_url, token=TOKEN, rules=rules)
            try:
                ports = lab.read()["ports"]
                am = f"http://127.0.0.1:{ports['alertmanager']}"
                await asyncio.sleep(5.0 if quick else _WARM_UP_S)
                quiet = await firing_alerts(am)  # what fires with no fault (ideally nothing)
                for round_ in range(rounds):
                    for fault in faults:
                        row = await fault_window(
                            lab, fault, am, messages_since, round_=round_, settle=settle
                        )
                        results.append(row)
                        await settle_alerts(am, quiet, limit=0.0 if quick else _SETTLE_LIMIT_S)
                if peers is not None:
                    prometheus = f"http://127.0.0.1:{ports['prometheus']}"
                    await rank_windows(prometheus, THREE_PART, results, python=peers)
            finally:
                await asyncio.to_thread(lab.down)
    figures = summarise(faults, rounds, results)
    if peers is not None:
        add_peer_figures(figures, results)
    return {**figures, "rules": rules.summary()} if rules is not None else figures


async def fault_window(
    lab: Lab, fault: Fault, am: str, messages_since: Any, *, round_: int, settle: float
) -> dict[str, Any]:
    """One fault's window, the same on every lab: inject, wait for a new alert, read
    whytree's first report, clear, settle; the window's row (scored by report_score)."""
    before = await firing_alerts(am)
    t0 = time.monotonic()
    injected_at = time.time()
    await asyncio.to_thread(inject, lab, fault)
    alert_at: float | None = None
    new: set[str] = set()
    wait_alert = fault.show_s + _ALERT_WAIT_MARGIN_S
    try:
        while time.monotonic() - t0 < wait_alert:
            new = await firing_alerts(am) - before
            if new:
                alert_at = time.monotonic()
                break
            await asyncio.sleep(1.0)
        report: tuple[float, str] | None = None
        if alert_at is not None or fault.nothing_wrong:
            deadline = time.monotonic() + (_REPORT_WAIT_S if alert_at else 1.0)
            while time.monotonic() < deadline:
                report = first_report(messages_since(t0))
                if report is not None:
                    break
                await asyncio.sleep(1.0)
    finally:
        await asyncio.to_thread(clear, lab)
    cleared_at = time.time()
    if fault.nothing_wrong:
        # Whatever whytree said during the window (and the settling after it) is counted.
        await asyncio.sleep(settle)
        said = messages_since(t0)
        report = said[0] if said else None  # any message at all is counted against it
    else:
        await asyncio.sleep(settle)
    text = report[1] if report else None
    cause_ok, component_ok = score(fault, text)
    logger.info(
        "live: %s round %d: alerts %s; cause %s, component %s; report: %s",
        fault.name,
        round_,
        sorted(new) or "-",
        cause_ok,
        component_ok,
        (text or "(none)")[:1500].replace("\n", " | "),
    )
    return {
        "fault": fault.name,
        "round": round_,
        "nothing_wrong": fault.nothing_wrong,
        "alerts": sorted(new),
        "alerted": alert_at is not None,
        "reported": report is not None,
        "fault_to_alert_s": round(alert_at - t0, 1) if alert_at else None,
        "alert_to_report_s": round(report[0] - alert_at, 1) if report and alert_at else None,
        "cause_ok": cause_ok,
        "component_ok": component_ok,
        "false_cause": fault.nothing_wrong and text is not None and names_cause(text),
        "wrong_cause": wrong_cause(fault, text),
        "quotes_log": quotes_log(text) and not fault.nothing_wrong,
        "logged": fault.logged,
        "scan_used": scan_used(text),
        "scan_candidate": first_candidate(text),
        "scan_component_first": bool(fault.component)
        and str(fault.component).lower() in (first_candidate(text) or "").lower(),
        # for the peers beside whytree (`--peers`, lab/system/beside.py); never printed
        "component": fault.component,
        "report": text,
        "injected_at": injected_at,
        "cleared_at": cleared_at,
    }


#: A log line quoted as evidence that it is new (docs/logs.md): “line” ×N since 02:01:05 UTC,
#: none / 3 in the 60 min before — in English or Russian; a line that stopped is not one.
_QUOTED_LOG = re.compile(r"×\d+ (?:since|с) \d\d:\d\d:\d\d UTC, (?:none|\d+ in|ни одной|\d+ за)")


def quotes_log(text: str | None) -> bool:
    """Does the report quote a log line as evidence?"""
    return text is not None and _QUOTED_LOG.search(text) is not None


async def settle_alerts(am: str, quiet: set[str], *, limit: float) -> None:
    """Wait (at most `limit` s) until Alertmanager holds no alert beyond the `quiet` ones."""
    deadline = time.monotonic() + limit
    while True:
        left = await firing_alerts(am) - quiet
        if not left:
            return
        if time.monotonic() >= deadline:
            break
        await asyncio.sleep(2.0)
    logger.warning("live: still firing after %.0f s of settling: %s", limit, sorted(left))


#: The host's busy CPU share over the last minute, as the lab's Prometheus reads it.
_HOST_BUSY = '1 - avg(rate(node_cpu_seconds_total{mode="idle"}[1m]))'
#: A quiet host: the share of CPU the lab's own load keeps busy stays well under this.
_HOST_QUIET = 0.5


async def host_busy(prometheus_url: str) -> float | None:
    """The host's busy CPU share over the last minute, or None (no answer, no series)."""
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http,
            http.get(f"{prometheus_url}/api/v1/query", params={"query": _HOST_BUSY}) as response,
        ):
            body = await response.json()
        return float(body["data"]["result"][0]["value"][1])
    except (aiohttp.ClientError, TimeoutError, ValueError, KeyError, IndexError, TypeError):
        return None


async def settle_host(prometheus_url: str, *, limit: float, every: float = 5.0) -> None:
    """Wait (at most `limit` s, looking `every` s) until the host's CPU is quiet: the lab's
    start-up, or the previous window's load, no longer in the minute its rules read."""
    deadline = time.monotonic() + limit
    busy = await host_busy(prometheus_url)
    while busy is not None and busy >= _HOST_QUIET:
        if time.monotonic() >= deadline:
            logger.warning(
                "live: the host's CPU still %.0f %% busy after %.0f s of settling",
                busy * 100,
                limit,
            )
            return
        await asyncio.sleep(every)
        busy = await host_busy(prometheus_url)


def _quantile(values: list[float], q: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 1)


def summarise(faults: list[Fault], rounds: int, results: list[dict[str, Any]]) -> dict[str, Any]:
    def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
        scored = [r for r in rows if not r["nothing_wrong"]]
        reported = [r for r in scored if r["reported"]]
        logged = [r for r in reported if r.get("logged")]
        to_report = [r["alert_to_report_s"] for r in rows if r["alert_to_report_s"] is not None]
        to_alert = [r["fault_to_alert_s"] for r in rows if r["fault_to_alert_s"] is not None]
        return {
            "alerts_received": sum(1 for r in rows if r["reported"]),
            "ac_at_1_cause": round(sum(r["cause_ok"] for r in scored) / len(scored), 3)
            if scored
            else None,
            "ac_at_1_component": round(sum(r["component_ok"] for r in scored) / len(scored), 3)
            if scored
            else None,
            "false_causes": sum(1 for r in rows if r["false_cause"]),
            "wrong_causes": sum(1 for r in rows if r.get("wrong_cause")),
            # of the fault windows' reports, those that quote a log line as evidence
            "reports_quoting_logs": round(
                sum(1 for r in reported if r.get("quotes_log")) / len(reported), 3
            )
            if reported
            else None,
            # reports the change scan contributed to; with the runbooks off, the share of
            # fault windows whose first candidate is the fault's component, and nothing-wrong
            # windows where the scan named any candidate (never wanted)
            "scan_used": sum(1 for r in rows if r.get("scan_used")),
            "scan_component_first": round(
                sum(1 for r in scored if r.get("scan_component_first")) / len(scored), 3
            )
            if scored
            else None,
            "scan_candidates_when_nothing_wrong": sum(
                1 for r in rows if r["nothing_wrong"] and r.get("scan_candidate")
            ),
            # the same, of the faults whose software writes a line about them (`logged`)
            "reports_quoting_logs_where_logged": round(
                sum(1 for r in logged if r.get("quotes_log")) / len(logged), 3
            )
            if logged
            else None,
            "p50_alert_to_report_s": _quantile(to_report, 50),
            "p95_alert_to_report_s": _quantile(to_report, 95),
            "p95_fault_to_alert_s": _quantile(to_alert, 95),
        }

    by_fault = {}
    for fault in faults:
        rows = [r for r in results if r["fault"] == fault.name]
        by_fault[fault.name] = {
            **figures(rows),
            "alerts": sorted({a for r in rows for a in r["alerts"]}),
            "alerted": sum(1 for r in rows if r["alerted"]),
        }
    return {"faults": len(faults), "rounds": rounds, **figures(results), "by_fault": by_fault}


def _rules_notes(rules: dict[str, Any] | None) -> list[str]:
    """The rules the lab ran, when not its own as they are (`--rules`, `--max-for`)."""
    if not rules:
        return []
    files = ", ".join(Path(f).name for f in rules["files"]) or "the lab's own"
    lines = [f"alert rules: {rules['alerting_rules']} alerting rules from {files}"]
    if rules.get("max_for"):
        lines.append(
            f"--max-for {rules['max_for']}: `for:` lowered on {rules['for_capped']} of them "
            "(expressions untouched)"
        )
    return lines


def _peer_lines(figures: dict[str, Any]) -> list[str]:

    return format_peers(figures)


def format_live_report(figures: dict[str, Any]) -> str:
    lines = [
        f"Live lab: {figures['faults']} faults x {figures['rounds']} rounds, runbooks "
        f"{figures.get('runbooks', 'on')} "
        "(real exporters and Alertmanager; runbook planner, fake Telegram)",
        f"  alerts that reached whytree (reported): {figures['alerts_received']}",
        f"  AC@1 cause:        {figures['ac_at_1_cause']}   (target >= 0.85)",
        f"  AC@1 component:    {figures['ac_at_1_component']}   (target >= 0.85)",
        f"  false causes:      {figures['false_causes']}   (target 0)",
        f"  wrong causes:      {figures['wrong_causes']}   (target 0; a cause not the "
        "fault's, at medium confidence or above)",
        f"  reports quoting a log line: {figures['reports_quoting_logs']}; where the "
        f"software logs the fault: {figures['reports_quoting_logs_where_logged']}   "
        "(target >= 0.7)",
        f"  change scan: in {figures['scan_used']} reports; its first candidate the fault's "
        f"component in {figures['scan_component_first']} of fault windows (target >= 0.7 "
        f"with the runbooks off); candidates when nothing was wrong: "
        f"{figures['scan_candidates_when_nothing_wrong']} (target 0)",
        f"  alert -> report:   p50 {figures['p50_alert_to_report_s']} s, "
        f"p95 {figures['p95_alert_to_report_s']} s (target <= 60)",
        f"  fault -> alert:    p95 {figures['p95_fault_to_alert_s']} s",
        *(f"  {note}" for note in _rules_notes(figures.get("rules"))),
        *_peer_lines(figures),
        "  by fault:",
    ]
    for name, f in figures["by_fault"].items():
        lines.append(
            f"    {name:<16} alerted {f['alerted']}, reported {f['alerts_received']}, "
            f"cause {f['ac_at_1_cause']}, component {f['ac_at_1_component']}, "
            f"wrong {f['wrong_causes']}, logs {f['reports_quoting_logs']}, "
            f"scan first {f['scan_component_first']}, "
            f"alerts {','.join(f['alerts']) or '-'}"
        )
    return "\n".join(lines)
