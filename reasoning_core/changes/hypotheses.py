"""The change scan's components as hypotheses in the tree: candidates beside a runbook's causes.

When a runbook's hypotheses all end below "established" (the reflection revises the plan),
the runbook planner asks the scan what changed around the analysis' subject and adds its
top components as hypotheses keyed ``scan_…``. Each is titled with what moved and when
("what changed first: postgres (pg_stat_activity_count rose from 02:01:05)"); its one check
reads that series again over the scan's window (a range query of exactly its labels, so
its points are the evidence and the report's chart), and the reading confirms it when the
series still shows the change, strongest when it came before the symptom, and refutes it
when the change is no longer there. Only a runbook's verdict rule establishes a cause:
a scan hypothesis' p is capped at `SCAN_MAX`, below "established" and below a runbook's
cause by elimination, so it is reported as a candidate and never outranks a cause a
runbook's checks established or left standing.

What the checks need travels in the plan's parameters under `SCAN_KEY` (as the runbook's
own state does), so a tree continued after a restart can still run them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from reasoning_core.changes.neighbourhood import quote
from reasoning_core.changes.scan import (
    ComponentChange,
    ScanResult,
    raw_points,
    series_points,
)
from reasoning_core.changes.score import score_appeared, score_series
from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Evidence
from reasoning_core.ports.planning import CheckProposal, HypothesisProposal
from reasoning_core.tools.base import ToolRequest, ToolResult
from reasoning_core.tree.aggregation import ELIMINATION_MAX

#: Keys of the scan's hypotheses start with this.
SCAN_KEY_PREFIX = "scan_"
#: Where the plan's parameters keep what the scan's checks read.
SCAN_KEY = "change_scan"
#: The highest p a scan hypothesis reaches: a candidate, below "established" and below a
#: cause a runbook's checks left standing by elimination (its rivals refuted by checks,
#: capped at ELIMINATION_MAX): what merely changed never outranks that reasoning.
SCAN_MAX = ELIMINATION_MAX - 0.05
#: Where a scan hypothesis starts: a lead, not yet a cause.
SCAN_PRIOR = 0.1
#: How many components become hypotheses.
TOP = 2
#: A confirming reading's strength: `_EVIDENCE_BASE` plus `_EVIDENCE_RANK` times the
#: component's weight relative to the first's, so the tree keeps the scan's order (the
#: others stay below the first as far as they weighed less).
_EVIDENCE_BASE = 0.3
_EVIDENCE_RANK = 0.4
_PLACE_DISCOUNT = 0.25

_WORDS: dict[str, str] = {
    "up": N_("what changed first: {component} ({series} rose from {at})"),
    "down": N_("what changed first: {component} ({series} fell from {at})"),
    "appeared": N_("what changed first: {component} ({series} appeared at {at})"),
    "check": N_("Did {series} of {component} change before the symptom?"),
    "before": N_("{at}, {seconds} s before the symptom"),
    "after": N_("{at}, {seconds} s after the symptom began"),
    "changed": N_("{component}: {series} went from {before} to {after} from {when}"),
    "gone": N_("{component}: {series} no longer shows the change (now {now}, usually {before})"),
    "no_points": N_("{component}: {series} has no points in the window any more"),
}


class ScanSpec(BaseModel):
    """What one scan hypothesis' check reads: the series, the window, the symptom's onset."""

    component: str
    labels: dict[str, str]
    counter: bool
    direction: str
    onset: datetime
    start: datetime
    end: datetime
    incident_start: datetime
    step_sec: float = Field(gt=0)
    threshold: float = Field(gt=0)
    symptom_onset: datetime | None = None
    #: Born in the window (a counter with no sample before it): read as `score_appeared` does.
    appeared: bool = False
    #: The component's weight relative to the scan's first, less for each place down (1.0
    #: for the first).
    rank_weight: float = Field(default=1.0, ge=0.0, le=1.0)


def is_scan_key(key: str) -> bool:
    """Is this the key of a hypothesis the change scan proposed?"""
    return key.startswith(SCAN_KEY_PREFIX)


def scan_plan(
    result: ScanResult, *, threshold: float, language: str, taken: set[str], top: int = TOP
) -> tuple[list[HypothesisProposal], dict[str, Any]]:
    """The top components as proposals (keys in `taken` left out) and the parameters their
    checks read (under `SCAN_KEY`)."""
    window = result.window
    if window is None:
        return [], {}
    proposals: list[HypothesisProposal] = []
    specs: dict[str, Any] = {}
    top_weight = result.components[0].weight if result.components else 0.0
    for position, component in enumerate(result.components):
        if len(proposals) >= top:
            break
        key = _key(component.component)
        if key in taken or key in specs:
            continue
        first = component.series[0]
        spec = ScanSpec(
            component=component.component,
            labels=dict(first.labels),
            counter=first.counter,
            direction=first.change.direction,
            onset=first.change.onset,
            appeared=first.change.appeared,
            start=window.start,
            end=window.end,
            incident_start=window.incident_start,
            step_sec=window.step_sec,
            threshold=threshold,
            symptom_onset=result.symptom_onset,
            rank_weight=_rank_weight(component.weight, top_weight, position),
        )
        proposals.append(
            HypothesisProposal(
                key=key,
                title=title(component, language),
                description=gettext(language, _WORDS["check"]).format(
                    series=first.name, component=component.component
                ),
                prior=SCAN_PRIOR,
                ceiling=SCAN_MAX,
            )
        )
        specs[key] = spec.model_dump(mode="json")
    return proposals, ({SCAN_KEY: specs} if specs else {})


def title(component: ComponentChange, language: str) -> str:
    """ "what changed first: postgres (pg_stat_activity_count rose from 02:01:05)"."""
    first = component.series[0]
    how = "appeared" if first.change.appeared else first.change.direction
    text = gettext(language, _WORDS[how]).format(
        component=component.component, series=first.name, at=f"{component.onset:%H:%M:%S}"
    )
    return text[:200]


def spec_of(parameters: Mapping[str, Any], key: str) -> ScanSpec | None:
    """The check's spec of a scan hypothesis, from the plan's parameters (None: not there)."""
    specs = parameters.get(SCAN_KEY)
    raw = specs.get(key) if isinstance(specs, Mapping) else None
    if not isinstance(raw, Mapping):
        return None
    try:
        return ScanSpec.model_validate(raw)
    except ValidationError:
        return None


def scan_check(key: str, spec: ScanSpec, language: str) -> CheckProposal:
    """The hypothesis' one check: its series over the scan's window."""
    name = spec.labels.get("__name__", "?")
    return CheckProposal(
        key=f"{key}.series",
        description=gettext(language, _WORDS["check"]).format(
            series=name, component=spec.component
        )[:500],
        tool="prometheus",
        request=ToolRequest(
            query=selector(spec.labels),
            start=spec.start,
            end=spec.end,
            step_sec=spec.step_sec,
        ),
        gain=0.6,
        extra={"scan": key},
    )


def selector(labels: Mapping[str, str]) -> str:
    """The PromQL selector of exactly one series (every label, values quoted)."""
    matchers = ",".join(f'{name}="{quote(value)}"' for name, value in sorted(labels.items()))
    return f"{{{matchers}}}"


def read_scan_check(result: ToolResult, spec: ScanSpec, language: str) -> Evidence:
    """The series read again: the change still there (confirms, strongest when it came
    before the symptom), gone (refutes), or no points (inconclusive)."""
    name = spec.labels.get("__name__", "?")
    if not result.ok:
        return Evidence(confirmed=None, confidence=0.0, text=result.error or "failed")
    points = series_points(result.rows[0], counter=spec.counter) if result.rows else []
    if not points:
        text = gettext(language, _WORDS["no_points"]).format(component=spec.component, series=name)
        return Evidence(confirmed=None, confidence=0.0, text=text)
    series = {
        "t": [at.timestamp() for at, _ in points],
        "v": [v for _, v in points],
        "label": f"{spec.component}: {name}" + (" (rate)" if spec.counter else ""),
    }
    found = (
        score_appeared(
            raw_points(result.rows[0]),
            incident_start=spec.incident_start,
            end=spec.end,
            step=timedelta(seconds=spec.step_sec),
        )
        if spec.appeared
        else score_series(
            points,
            raw=raw_points(result.rows[0]),
            counter=spec.counter,
            incident_start=spec.incident_start,
            threshold=spec.threshold,
        )
    )
    if found is None or found.direction != spec.direction:
        before = [v for at, v in points if at < spec.incident_start]
        text = gettext(language, _WORDS["gone"]).format(
            component=spec.component,
            series=name,
            now=_number(points[-1][1]),
            before=_number(sorted(before)[len(before) // 2]) if before else "?",
        )
        return Evidence(
            confirmed=False, confidence=0.5, text=text, data={"series": series}, has_data=True
        )
    lag = (found.onset - spec.symptom_onset) if spec.symptom_onset else None
    text = gettext(language, _WORDS["changed"]).format(
        component=spec.component,
        series=name,
        before=_number(found.before),
        after=_number(found.after),
        when=_when(found.onset, lag, language),
    )
    return Evidence(
        confirmed=True,
        confidence=round(_EVIDENCE_BASE + _EVIDENCE_RANK * spec.rank_weight, 3),
        text=text,
        data={"series": series, "onset": found.onset.isoformat(), "score": found.score},
        has_data=True,
    )


def _key(component: str) -> str:
    slug = "".join(c if c.isalnum() else "_" for c in component.lower()).strip("_")
    return (SCAN_KEY_PREFIX + (slug or "part"))[:64]


def _rank_weight(weight: float, top_weight: float, position: int) -> float:
    """The component's weight relative to the first's, a quarter less for each place down
    (a tie the scan broke by the number of changed series or the onset stays broken)."""
    relative = min(1.0, weight / top_weight) if top_weight > 0 else 0.0
    return max(0.0, relative * (1.0 - _PLACE_DISCOUNT * position))


def _when(onset: datetime, lag: timedelta | None, language: str) -> str:
    at = f"{onset:%H:%M:%S} UTC"
    if lag is None or abs(lag.total_seconds()) < 1:
        return at
    seconds = round(abs(lag.total_seconds()))
    word = "before" if lag < timedelta(0) else "after"
    return gettext(language, _WORDS[word]).format(at=at, seconds=seconds)


def _number(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else "?"
