"""The symptom the gate measured (subject, metric, change, window), kept for the report.

The gate's checks ran before any hypothesis; their numbers and series are what
the report's first line and its chart show. `symptom_data` picks the gate
check that found the symptom and whose measure is still beyond its limit (else the first)
and keeps its evidence data with
the subject the analysis is about (a host by its one name, runbooks/hosts.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reasoning_core.models import Evidence
from reasoning_core.planners.runbook.checks import PlanState
from reasoning_core.runbooks import Check, Runbook
from reasoning_core.runbooks.hosts import host_name
from reasoning_core.runbooks.verdicts import beyond_now


def symptom_data(
    runbook: Runbook, state: PlanState, found: Sequence[tuple[Check, Evidence]]
) -> dict[str, Any] | None:
    """The symptom as JSON-ready data, or None when no gate check measured a change."""
    measured = [(c, e) for c, e in found if "change" in e.data or "value" in e.data]
    if not measured:
        return None
    check, evidence = max(
        measured,
        key=lambda ce: (ce[1].confirmed is True, beyond_now(ce[1].data), ce[1].confidence),
    )
    kind, subject = _subject(runbook, state)
    window = state.window
    return {
        **evidence.data,
        "found": evidence.confirmed,
        "check": check.id,
        "kind": kind,
        "subject": subject,
        "baseline_hours": (window.baseline_end - window.baseline_start).total_seconds() / 3600,
        "recent_start": window.recent_start.isoformat(),
    }


def _subject(runbook: Runbook, state: PlanState) -> tuple[str, str]:
    for parameter in runbook.parameters:
        value = state.params.get(parameter.name)
        if parameter.source == "entity" and value:
            kind = parameter.kind or parameter.name
            return kind, host_name(value) if kind == "host" else value
    return "runbook", runbook.id
