"""What a report's chart shows, taken from the tree (or, for an answer without one, from
the answer's own chart, `answer_chart_data`): no query runs for it.

The symptom's series (what the gate read, tree/symptom.py) goes on top; the
series of the winning evidence (the primary hypothesis' strongest confirmed
check that carries one, runbooks/series.py) goes below it on the same time
axis. `chart_data` says why there is no chart when there cannot be one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import AnswerChart, Node, Tree
from reasoning_core.tree.symptom import symptom_line, symptom_of
from reasoning_core.tree.walk import descendants

_WHY: dict[str, str] = {
    "no_symptom": N_("no chart: this analysis measured no time series"),
    "no_points": N_("no chart: the measured series has no readable points"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Series:
    """Points (gaps as NaN) with what they measure."""

    times: list[datetime]
    values: list[float]
    label: str
    unit: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChartData:
    """The chart of one report: title, the symptom's series, the window, the evidence below."""

    title: str
    symptom: Series
    recent_start: datetime
    baseline_start: datetime | None = None
    onset: datetime | None = None
    evidence: Series | None = None
    notes: list[str] = field(default_factory=list)


def chart_data(tree: Tree, language: str) -> ChartData | str:
    """The chart's data, or one line saying why this report has no chart."""
    symptom = symptom_of(tree)
    raw = symptom.get("series") if symptom else None
    if symptom is None or not isinstance(raw, dict):
        return gettext(language, _WHY["no_symptom"])
    top = _series(raw)
    if top is None:
        return gettext(language, _WHY["no_points"])
    return ChartData(
        title=symptom_line(symptom, language) or top.label,
        symptom=top,
        recent_start=_at(raw.get("recent_start")) or top.times[-1],
        baseline_start=_at(raw.get("baseline_start")),
        onset=_at(symptom.get("onset")),
        evidence=_winning(tree, str(symptom.get("check") or "")),
    )


def answer_chart_data(chart: AnswerChart, language: str) -> ChartData | str:
    """The chart of an answer without a tree (`Answer.chart`), or one line saying why none."""
    top = _series(chart.symptom)
    if top is None:
        return gettext(language, _WHY["no_points"])
    return ChartData(
        title=chart.title or top.label,
        symptom=top,
        recent_start=_at(chart.symptom.get("recent_start")) or top.times[-1],
        baseline_start=_at(chart.symptom.get("baseline_start")),
        onset=chart.onset,
        evidence=_series(chart.evidence) if chart.evidence else None,
    )


def why_no_chart(language: str) -> str:
    """The line shown when drawing failed (for the text view and the page)."""
    return gettext(language, _WHY["no_symptom"])


def _winning(tree: Tree, symptom_check: str) -> Series | None:
    primary = tree.synthesis.primary.node_id if tree.synthesis else None
    if primary is None or primary not in tree.nodes:
        return None
    candidates = [
        node
        for node in descendants(tree, primary)
        if node.result is not None
        and isinstance(node.result.data.get("series"), dict)
        and node.result.data.get("check") != symptom_check
    ]
    if not candidates:
        return None
    best = max(candidates, key=_weight)
    return _series(best.result.data["series"]) if best.result else None


def _weight(node: Node) -> tuple[bool, float]:
    result = node.result
    assert result is not None
    return result.confirmed is True, result.confidence


def _series(raw: dict[str, Any]) -> Series | None:
    times, values = raw.get("t"), raw.get("v")
    if not isinstance(times, list) or not isinstance(values, list):
        return None
    points = []
    for t, v in zip(times, values, strict=False):
        at = _at(t)
        if at is None:
            continue
        number = float(v) if isinstance(v, int | float) and not isinstance(v, bool) else math.nan
        points.append((at, number if math.isfinite(number) else math.nan))
    if not any(math.isfinite(v) for _, v in points):
        return None
    points.sort(key=lambda p: p[0])
    return Series(
        times=[at for at, _ in points],
        values=[v for _, v in points],
        label=str(raw.get("label") or ""),
        unit=str(raw.get("unit") or ""),
    )


def _at(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        try:
            return datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            at = datetime.fromisoformat(value)
        except ValueError:
            return None
        return at if at.tzinfo else at.replace(tzinfo=UTC)
    return None
