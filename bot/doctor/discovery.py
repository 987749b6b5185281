"""Which runbooks are live against the configured Prometheus, and which metric families the
others miss (reasoning_core/runbooks/discovery.py), one line per runbook."""

from __future__ import annotations

from collections.abc import Mapping

from bot.doctor.report import Finding
from reasoning_core.errors import CatalogueError
from reasoning_core.runbooks import RunbookSet
from reasoning_core.runbooks.discovery import (
    CatalogueReader,
    Discovery,
    RunbookStatus,
    discover,
    read_catalogue,
)
from reasoning_core.tools.base import Tool

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


def runbook_finding(part: str, status: RunbookStatus) -> Finding:
    """One runbook's line: live (and what its other checks miss), or off and why."""
    if status.live:
        return Finding.ok(part, f"valid, {status.line()}")
    return Finding.off(
        part,
        f"valid, {status.line()}",
        "map your metric names in the runbook's metrics: block (RUNBOOKS_DIR), "
        "or ignore it if you do not run these exporters",
    )
