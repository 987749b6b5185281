"""A date as a question says it (`DateExpr`), before an anchor gives it a calendar day.

`DateExpr.resolve` turns one into a UTC midnight relative to an anchor: the data's last
timestamp, not the wall clock, so historical datasets work. `DateSpan` is the start and
the end a question names. The grammar that reads them from text is ``dates.py``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict

DateKind = Literal["date", "day", "days_ago", "weekday", "week", "month", "year"]


class DateExpr(BaseModel):
    """A date as the question says it, before an anchor gives it a calendar day."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: DateKind
    text: str
    year: int | None = None
    month: int | None = None
    day: int | None = None
    days_ago: int | None = None
    weekday: int | None = None  # 0 = Monday
    weeks_ago: int | None = None
    months_ago: int | None = None
    whole_month: bool = False  # "в октябре", "October 2026": the month, not its first day

    def resolve(self, now: datetime, *, min_recent_hours: int = 12) -> datetime:
        """UTC midnight of the day meant, relative to the anchor `now`."""
        today = _utc(now).date()
        if self.kind in ("date", "year"):  # a year: its first day
            day = _calendar_day(self, today)
        elif self.kind == "day":  # "the 27th", "с 25-го": the latest such day of a month
            day = _month_day(self.day or 1, today)
        elif self.kind == "days_ago":
            day = today - timedelta(days=self.days_ago or 0)
        elif self.kind == "weekday":
            day = today - timedelta(days=(today.weekday() - (self.weekday or 0)) % 7)
            if (_utc(now) - _midnight(day)) < timedelta(hours=min_recent_hours):
                day -= timedelta(days=7)  # "since Monday" said on Monday morning
        elif self.kind == "month":  # "last month": its first day
            back = today.year * 12 + today.month - 1 - (self.months_ago or 0)
            day = date(back // 12, back % 12 + 1, 1)
        else:
            day = today - timedelta(days=today.weekday() + 7 * (self.weeks_ago or 0))
        return _midnight(day)

    def last_day(self, now: datetime) -> datetime:
        """UTC midnight of the last day the expression covers: a year's 31 December, else
        the day it starts (a point)."""
        if self.kind == "year" and self.year is not None:
            return _midnight(date(self.year, 12, 31))
        return self.resolve(now)


class DateSpan(BaseModel):
    """The start ("since ...") and optional end ("until ...") the question names."""

    model_config = ConfigDict(frozen=True)

    start: DateExpr | None = None
    end: DateExpr | None = None


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("naive datetime: anchors must be timezone-aware")
    return moment.astimezone(UTC)


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def _month_day(number: int, today: date) -> date:
    """The latest day `number` of a month, not after `today`."""
    year, month = today.year, today.month
    while True:
        try:
            day = date(year, month, number)
        except ValueError:  # "the 31st" in a 30-day month
            day = None
        if day is not None and day <= today:
            return day
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)


def _calendar_day(expr: DateExpr, today: date) -> date:
    month, day = expr.month or 1, expr.day or 1
    if expr.year is not None:
        return date(expr.year, month, day)
    year = today.year
    if (month, day) > (today.month, today.day):
        year -= 1  # a day without a year is the latest one not after the anchor
    if (month, day) == (2, 29):
        while True:
            try:
                return date(year, 2, 29)
            except ValueError:
                year -= 1
    return date(year, month, day)
