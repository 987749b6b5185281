"""Time windows of an investigation: "since DATE" from the question, else the data's tail.

The question's dates come parsed (`DateSpan`, understanding/dates.py); this module
only places them against the data. Without a date the recent window is the last
`recent_hours` of the data; the baseline is the `baseline_hours` before the recent
window (compared by hour of week).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, model_validator

from reasoning_core.understanding.dates import DateExpr, DateSpan

WINDOW_PARAMETERS = ("recent_start", "recent_end", "baseline_start", "baseline_end", "anchor")


class TimeWindow(BaseModel):
    """Recent and baseline intervals, half-open [start, end), timezone-aware UTC."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recent_start: AwareDatetime
    recent_end: AwareDatetime
    baseline_start: AwareDatetime
    baseline_end: AwareDatetime
    source: Literal["question", "default"]
    expression: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> TimeWindow:
        if not self.baseline_start < self.baseline_end <= self.recent_start < self.recent_end:
            raise ValueError("need baseline_start < baseline_end <= recent_start < recent_end")
        return self

    def params(self) -> dict[str, datetime]:
        """The window as template parameters (`WINDOW_PARAMETERS` minus `anchor`)."""
        return {
            "recent_start": self.recent_start,
            "recent_end": self.recent_end,
            "baseline_start": self.baseline_start,
            "baseline_end": self.baseline_end,
        }

    def recent_hours(self) -> float:
        return (self.recent_end - self.recent_start).total_seconds() / 3600


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("naive datetime: anchors must be timezone-aware")
    return moment.astimezone(UTC)


def _holds_anchor(expr: DateExpr, anchor: datetime) -> bool:
    """A whole year or month the anchor falls in ("в 2026", "в октябре" of October data)."""
    if expr.kind == "year":
        return expr.year == anchor.year
    if expr.whole_month:
        start = expr.resolve(anchor)
        return (start.year, start.month) == (anchor.year, anchor.month)
    return False


def resolve_window(
    span: DateSpan,
    *,
    now: datetime,
    recent_hours: float = 72,
    baseline_hours: float = 504,
    end_pad: timedelta = timedelta(hours=1),
    min_recent_hours: int = 12,
) -> TimeWindow:
    """The investigation window: from the question's dates if any, else the data's tail.

    `now` is the anchor (the data's last timestamp); `end_pad` makes the half-open
    recent window include the sample stamped `now`.
    """
    anchor = _utc(now)
    data_end = anchor + end_pad
    end = data_end
    if span.end is not None:
        end = min(data_end, span.end.resolve(anchor) + timedelta(days=1))
    if span.start is not None and not _holds_anchor(span.start, anchor):
        # (the year or month the data ends in asks about no part of it: its latest days)
        start = span.start.resolve(anchor, min_recent_hours=min_recent_hours)
        if start < end:
            return _window(start, end, baseline_hours, "question", span.start.text)
    default_start = data_end - timedelta(hours=recent_hours)
    return _window(default_start, data_end, baseline_hours, "default", None)


def _window(
    start: datetime,
    end: datetime,
    baseline_hours: float,
    source: Literal["question", "default"],
    expression: str | None,
) -> TimeWindow:
    return TimeWindow(
        recent_start=start,
        recent_end=end,
        baseline_start=start - timedelta(hours=baseline_hours),
        baseline_end=start,
        source=source,
        expression=expression,
    )
