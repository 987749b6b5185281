"""The `dependency_walk` verdict: which dependency's trouble began first (onsets compared).

Rows are samples of a query over the recent window (docs/runbooks.md,
"dependency_walk"): per service a latency ratio and an error rise against the
week before, and one row set per call edge. Each service's onset is the first
sample of a sustained run in trouble; the walk goes from the subject to the
callee that went wrong earliest, hop by hop, and names the last one as the root.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from datetime import datetime

from reasoning_core.models import Evidence
from reasoning_core.runbooks.evidence_words import evidence_line
from reasoning_core.runbooks.rows import Row, as_datetime, as_number
from reasoning_core.runbooks.rules import DependencyWalkRule
from reasoning_core.runbooks.strength import inconclusive

__all__ = ["Onset", "dependency_walk_rows", "find_onsets"]

Onset = tuple[datetime, str, float]  # when, which signal, its value then


def find_onsets(rule: DependencyWalkRule, rows: Sequence[Row]) -> dict[str, Onset]:
    """Each service in trouble: the first sample of its first sustained run, and why."""
    flags: dict[str, dict[datetime, tuple[str, float]]] = {}
    for row in rows:
        signal, service = row.get(rule.signal_column), row.get(rule.service_column)
        at, value = as_datetime(row.get(rule.time_column)), as_number(row.get("value"))
        if service is None or at is None or value is None:
            continue
        bad = (signal == "latency" and value >= rule.min_latency_ratio) or (
            signal == "errors" and value >= rule.min_error_rise
        )
        times = flags.setdefault(str(service), {})
        if bad and not times.get(at, ("", 0.0))[0]:
            times[at] = (str(signal), value)  # the first signal in trouble at this time
        elif not bad:
            times.setdefault(at, ("", 0.0))
    onsets: dict[str, Onset] = {}
    for service, by_time in flags.items():
        ordered = sorted(by_time.items())
        for i in range(len(ordered) - rule.sustain + 1):
            run = ordered[i : i + rule.sustain]
            if all(signal for _, (signal, _) in run):
                at, (signal, value) = run[0]
                onsets[service] = (at, signal, value)
                break
    return onsets


def _edges(rule: DependencyWalkRule, rows: Sequence[Row]) -> dict[str, list[str]]:
    callees: dict[str, list[str]] = {}
    for row in rows:
        if row.get(rule.signal_column) != "edge":
            continue
        caller, callee = row.get(rule.service_column), row.get(rule.dependency_column)
        if caller is None or callee is None or caller == callee:
            continue
        known = callees.setdefault(str(caller), [])
        if str(callee) not in known:
            known.append(str(callee))
    return callees


def _step(rows: Sequence[Row], column: str) -> float:
    times = sorted({t.timestamp() for r in rows if (t := as_datetime(r.get(column)))})
    gaps = [b - a for a, b in itertools.pairwise(times) if b > a]
    return min(gaps) if gaps else 60.0


def dependency_walk_rows(
    rule: DependencyWalkRule,
    rows: Sequence[Row],
    params: Mapping[str, str],
    language: str,
) -> Evidence:
    """Walk from the subject to the earliest-onset dependency in trouble (see module doc)."""
    subject = params.get(rule.subject, "")
    services = {str(r.get(rule.service_column)) for r in rows}
    if not subject or subject not in services:
        return inconclusive(evidence_line("walk_no_subject", language, subject=subject or "?"))
    callees = _edges(rule, rows)
    if not callees.get(subject):
        return _refuted(rule, evidence_line("walk_leaf", language, subject=subject), subject)
    onsets = find_onsets(rule, rows)
    slack = rule.slack_samples * _step(rows, rule.time_column)
    path = [subject]
    current_onset = onsets.get(subject)
    while True:
        candidates = [
            (onsets[c][0], c)
            for c in callees.get(path[-1], [])
            if c in onsets
            and c not in path
            and (
                current_onset is None
                or onsets[c][0].timestamp() <= current_onset[0].timestamp() + slack
            )
        ]
        if not candidates:
            break
        _, chosen = min(candidates)
        path.append(chosen)
        current_onset = onsets[chosen]
    if len(path) == 1:
        checked = ", ".join(callees[subject])
        text = evidence_line("walk_clean", language, subject=subject, checked=checked)
        return _refuted(rule, text, subject)
    root = path[-1]
    at, signal, value = onsets[root]
    subject_onset = onsets.get(subject)
    lead = (subject_onset[0] - at).total_seconds() / 60 if subject_onset else 0.0
    shown = f"{value:.1f}" if signal == "latency" else f"{value * 100:.1f}%"
    key = "walk_root" if lead >= 1 else "walk_root_together"
    text = evidence_line(
        key,
        language,
        root=root,
        subject=subject,
        onset=f"{at:%H:%M}",
        lead=f"{max(lead, 0.0):.0f}",
        path=" → ".join(path),
        signal=evidence_line(f"signal_{signal}", language, value=shown),
    )
    data = {
        "root_service": root,
        "path": path,
        "onset": at.isoformat(),
        "signal": signal,
        "lead_minutes": lead,
        "subject": subject,
    }
    return Evidence(
        confirmed=True, confidence=rule.confidence, text=text, data=data, has_data=True
    )


def _refuted(rule: DependencyWalkRule, text: str, subject: str) -> Evidence:
    return Evidence(
        confirmed=False,
        confidence=rule.refute_confidence,
        text=text,
        data={"root_service": subject, "path": [subject], "subject": subject},
        has_data=True,
    )
