"""The tool sources, each as its check kind probes it (reasoning_core/runbooks/kinds/), the
runbooks and their data, and the metrics port."""

from __future__ import annotations

import asyncio
import errno
import socket
from collections.abc import Mapping, Set

from bot.doctor.discovery import PART, discover_runbooks, off_findings, runbook_finding
from bot.doctor.report import Finding
from reasoning_core import (
    KINDS,
    Probe,
    ProbeContext,
    Runbook,
    RunbookSet,
    Tool,
    ToolRequest,
    kind_of,
)


async def check_tools(
    tools: Mapping[str, Tool], context: ProbeContext, *, later: Mapping[str, Finding]
) -> list[Finding]:
    """Each check kind's tool, in the registry's order, as its kind probes it (or says it
    is not configured); a kind in `later` gets that line instead (checked after the next
    start applies the migrations it needs)."""
    findings: list[Finding] = []
    for name in KINDS.names():
        if name in later:
            findings.append(later[name])
            continue
        kind = kind_of(name)
        tool = tools.get(name)
        if tool is None:
            absent = kind.absent(context)
            probes = [absent] if absent is not None else []
        else:
            probes = await kind.probe(tool, context)
        findings.extend(_finding(probe) for probe in probes)
    return findings


def _finding(probe: Probe) -> Finding:
    return Finding(
        part=probe.part,
        status=probe.state,
        detail=probe.detail,
        fix=probe.fix,
        required=probe.required,
    )


async def check_runbooks(
    runbooks: RunbookSet,
    tools: Mapping[str, Tool],
    *,
    limit_sec: float,
    after_migrations: Set[str] = frozenset(),
) -> list[Finding]:
    """Each runbook: invalid, switched off by discovery, or its data's state. A runbook
    whose data source opens only after the pending migrations (`after_migrations`: the
    SQL tool's reader role) is said to be checked then."""
    findings = [
        Finding.fail(f"runbook {error.file}", "invalid, skipped", f"fix it: {error}"[:300])
        for error in runbooks.errors
    ]
    try:
        async with asyncio.timeout(limit_sec * 3):
            found, summary = await discover_runbooks(runbooks, tools)
    except TimeoutError:
        found = None
        summary = Finding.fail(
            PART,
            "Prometheus did not list its metrics in time",
            "check PROMETHEUS_URL",
            required=False,
        )
    if summary is not None:
        findings.append(summary)
    off = []
    for runbook in runbooks.runbooks.values():
        status = found.statuses.get(runbook.id) if found else None
        if status is not None and status.uses_metrics and not status.live:
            off.append(status)
        elif status is not None and status.uses_metrics:
            findings.append(runbook_finding(f"runbook {runbook.id}", status))
        elif (anchor := runbook.window.anchor) is not None and anchor.tool in after_migrations:
            findings.append(
                Finding.note(
                    f"runbook {runbook.id}",
                    f"valid; its data ({anchor.tool}) is checked after the next start applies "
                    "the migrations",
                )
            )
        else:
            findings.append(await _runbook_data(runbook, tools, limit_sec))
    return [*findings, *off_findings(off)]


async def _runbook_data(runbook: Runbook, tools: Mapping[str, Tool], limit_sec: float) -> Finding:
    part = f"runbook {runbook.id}"
    anchor = runbook.window.anchor
    if anchor is None:
        return Finding.ok(part, "valid (no anchor query: its window ends now)")
    tool = tools.get(anchor.tool)
    if tool is None:
        return Finding.fail(
            part,
            f"valid, but its data source ({anchor.tool}) is not configured",
            "configure the tool, or ignore it if you do not use this runbook",
            required=False,
        )
    result = await tool.run(ToolRequest(query=anchor.query, timeout_sec=limit_sec))
    first = next(iter(result.rows[0].values()), None) if result.rows else None
    if result.ok and first is not None:
        return Finding.ok(part, f"valid, data up to {first}")
    why = result.error if not result.ok else "its anchor query found no rows"
    return Finding.fail(
        part,
        f"valid, but its data is missing: {why}",
        "load the data (`whytree demo` for the shipped runbooks)",
        required=False,
    )


def check_port(host: str, port: int | None) -> Finding:
    part = "metrics port (METRICS_PORT)"
    if port is None:
        return Finding.off(part, "not configured: no /metrics, /healthz or analysis pages")
    if port == 0:
        return Finding.ok(part, "0: any free port is taken at start")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return Finding.fail(
                    part,
                    f"{host}:{port} is in use",
                    "stop what uses it (another whytree?) or choose another METRICS_PORT",
                )
            return Finding.fail(
                part, f"cannot listen on {host}:{port}: {e.strerror}", "check METRICS_HOST"
            )
    return Finding.ok(part, f"{host}:{port} is free")
