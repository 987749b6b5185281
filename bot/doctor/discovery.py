"""Which runbooks are live against the configured Prometheus, and which metric families the
others miss (reasoning_core/runbooks/discovery.py): one line per live runbook, and the
runbooks that are off grouped by the exporter whose metrics they miss, one line each (a
Prometheus without node_exporter turns six runbooks off for one reason)."""

from __future__ import annotations

from collections.abc import Mapping

from bot.doctor.report import Finding
from reasoning_core import (
    CatalogueError,
    CatalogueReader,
    Discovery,
    RunbookSet,
    RunbookStatus,
    Tool,
    discover,
    read_catalogue,
)

PART = "runbook discovery"


async def discover_runbooks(
    runbooks: RunbookSet, tools: Mapping[str, Tool]
) -> tuple[Discovery | None, Finding | None]:
    """The runbooks' statuses against Prometheus, and the summary line (None, None: no
    Prometheus configured)."""
    prometheus = tools.get("prometheus")
    if not isinstance(prometheus, CatalogueReader):
        return None, None
    try:
        catalogue = await read_catalogue(prometheus, runbooks.runbooks.values())
    except CatalogueError as e:
        finding = Finding.fail(
            PART,
            f"cannot read the metric names: {e}",
            "whytree then keeps every runbook on; check PROMETHEUS_URL",
            required=False,
        )
        return None, finding
    found = discover(runbooks, catalogue)
    judged = [s for s in found.statuses.values() if s.uses_metrics]
    live = sum(s.live for s in judged)
    detail = (
        f"{live} of {len(judged)} Prometheus runbooks live against "
        f"{len(catalogue.names)} metric names"
    )
    return found, Finding.ok(PART, detail)


#: Metric name prefix -> what publishes those metrics.
EXPORTERS: dict[str, str] = {
    "node_": "node_exporter",
    "namedprocess_": "process-exporter",
    "pg_": "postgres_exporter",
    "probe_": "blackbox_exporter",
    "kube_": "kube-state-metrics",
    "kubelet_": "the kubelet",
    "container_": "cAdvisor",
    "istio_": "the service mesh (Istio)",
    "redis_": "redis_exporter",
    "nginx_": "nginx-prometheus-exporter",
}


def exporter_of(metric: str) -> str:
    """What publishes `metric` ("node_exporter"), or the metric's own name when unknown."""
    return next((name for prefix, name in EXPORTERS.items() if metric.startswith(prefix)), metric)


def runbook_finding(part: str, status: RunbookStatus) -> Finding:
    """One live runbook's line (and what its other checks miss)."""
    return Finding.ok(part, f"valid, {status.line()}")


def off_findings(statuses: list[RunbookStatus]) -> list[Finding]:
    """The runbooks that are off, one line per exporter whose metrics they miss."""
    groups: dict[str, list[RunbookStatus]] = {}
    for status in statuses:
        first = status.missing[0] if status.missing else status.runbook
        groups.setdefault(exporter_of(first), []).append(status)
    findings = []
    for exporter, off in groups.items():
        names = ", ".join(s.runbook for s in off)
        example = next((s.missing[0] for s in off if s.missing), "")
        missing = f" (no {example})" if example and example != exporter else ""
        findings.append(
            Finding.off(
                f"runbooks off: {exporter}",
                f"{len(off)} runbook(s) miss its metrics{missing}: {names}",
                f"run {exporter} and let Prometheus scrape it, or map your metric names in the "
                "runbooks' metrics: block (RUNBOOKS_DIR); ignore it if you do not run it",
            )
        )
    return findings
