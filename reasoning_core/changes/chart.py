"""The chart of the scan's candidates: the symptom as the scan read it on top, the first
candidate's first changed series below it, on one time axis over the scan's window.

An alert no runbook fits gets the scan's candidates as an answer without a tree; this is
its chart (`Answer.chart`), drawn as a report's is. No chart when the scan read no changed
symptom series (a subject with no probe and no request latency of its own) or found no
candidate: half a picture would say less than the text.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from reasoning_core.changes.components import component_of
from reasoning_core.changes.scan import ChangedSeries, ScanResult, ScanWindow
from reasoning_core.i18n import N_, gettext
from reasoning_core.models import AnswerChart
from reasoning_core.runbooks.series import chart_series
from reasoning_core.runbooks.timewindow import TimeWindow

_TITLE = N_("{symptom}, and what changed first: {candidate}")


def scan_chart(result: ScanResult, language: str) -> AnswerChart | None:
    """The chart of `result`'s first candidate against its symptom, or None."""
    window = result.window
    if window is None or result.symptom is None or not result.components:
        return None
    first = result.components[0].series[0]
    span = _span(window)
    symptom = _series(result.symptom, span)
    evidence = _series(first, span)
    if symptom is None or evidence is None:
        return None
    return AnswerChart(
        title=gettext(language, _TITLE).format(
            symptom=symptom["label"], candidate=result.components[0].component
        ),
        symptom=symptom,
        evidence=evidence,
        onset=result.symptom_onset or result.symptom.change.onset,
    )


def _span(window: ScanWindow) -> TimeWindow:
    end = max(window.end, window.incident_start + timedelta(seconds=1))
    return TimeWindow(
        baseline_start=window.start,
        baseline_end=window.incident_start,
        recent_start=window.incident_start,
        recent_end=end + timedelta(seconds=window.step_sec),
        source="default",
    )


def _series(item: ChangedSeries, span: TimeWindow) -> dict[str, Any] | None:
    """The series as a chart keeps it, named by its component (a counter's rate per second)."""
    return chart_series(
        item.points,
        span,
        label=f"{component_of(item.labels)}: {item.name}",
        unit="/s" if item.counter else "",
    )
