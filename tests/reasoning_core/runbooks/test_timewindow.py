"""Date parsing (ru/en, relative to the data's anchor) and investigation windows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from reasoning_core.runbooks.timewindow import TimeWindow, resolve_window
from reasoning_core.understanding.dates import DateSpan, find_dates

#: The data's last hour: Thursday 15 October 2026, 23:00 UTC.
ANCHOR = datetime(2026, 10, 15, 23, tzinfo=UTC)


def day(month: int, d: int, year: int = 2026) -> datetime:
    return datetime(year, month, d, tzinfo=UTC)


def since(question: str, now: datetime = ANCHOR) -> datetime:
    start = find_dates(question).start
    assert start is not None, f"no date found in {question!r}"
    return start.resolve(now)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Why did traffic drop on cell 10001 since 2026-10-12?", day(10, 12)),
        ("Почему упал трафик с 12.10.2026?", day(10, 12)),
        ("since 12.10.26", day(10, 12)),
        ("traffic low since 12/10", day(10, 12)),
        ("traffic low from 10/25/2025", day(10, 25, 2025)),
        ("since Oct 12", day(10, 12)),
        ("since October 12th, 2026", day(10, 12)),
        ("since 12 October", day(10, 12)),
        ("since the 12th of October", day(10, 12)),
        ("с 12 октября", day(10, 12)),
        ("с 3 мая 2026 года", day(5, 3)),
        ("упал с 21 марта, в чём причина?", day(3, 21)),
        ("с 1 марта", day(3, 1)),
        ("since 2 March", day(3, 2)),
        ("с 30 мая", day(5, 30, 2026)),
        ("с 7 августа", day(8, 7)),
        ("начиная с 1 сентября", day(9, 1)),
        # a day without a year is the latest one not after the anchor
        ("since Dec 20", day(12, 20, 2025)),
        ("с 20 декабря", day(12, 20, 2025)),
    ],
)
def test_absolute_dates(question: str, expected: datetime) -> None:
    assert since(question) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("why did traffic drop yesterday?", day(10, 14)),
        ("почему вчера упал трафик?", day(10, 14)),
        ("since the day before yesterday", day(10, 13)),
        ("с позавчера", day(10, 13)),
        ("errors up today", day(10, 15)),
        ("сегодня ошибки", day(10, 15)),
        ("since Monday", day(10, 12)),
        ("since last Monday", day(10, 12)),
        ("с понедельника", day(10, 12)),
        ("со вторника", day(10, 13)),
        ("со среды", day(10, 14)),
        ("с четверга", day(10, 15)),
        ("с пятницы", day(10, 9)),
        ("с субботы", day(10, 10)),
        ("с воскресенья", day(10, 11)),
        ("since Sunday", day(10, 11)),
        ("last week", day(10, 5)),
        ("на прошлой неделе", day(10, 5)),
        ("с прошлой недели", day(10, 5)),
        ("this week", day(10, 12)),
        ("3 days ago", day(10, 12)),
        ("3 дня назад", day(10, 12)),
        ("5 дней назад", day(10, 10)),
        ("1 день назад", day(10, 14)),
        ("a week ago", day(10, 8)),
        ("неделю назад", day(10, 8)),
        ("over the last 4 days", day(10, 11)),
        ("за последние 4 дня", day(10, 11)),
    ],
)
def test_relative_dates_use_the_anchor(question: str, expected: datetime) -> None:
    assert since(question) == expected


def test_relative_dates_follow_the_anchor_not_the_clock() -> None:
    old = datetime(2019, 3, 7, 12, tzinfo=UTC)  # a Thursday years ago
    assert since("yesterday", old) == day(3, 6, 2019)
    assert since("с понедельника", old) == day(3, 4, 2019)
    assert since("since 12 October", old) == day(10, 12, 2018)


def test_weekday_of_the_anchor_morning_means_last_week() -> None:
    early_thursday = datetime(2026, 10, 15, 5, tzinfo=UTC)
    assert since("since Thursday", early_thursday) == day(10, 8)
    assert since("since Thursday", ANCHOR) == day(10, 15)


@pytest.mark.parametrize(
    "question",
    [
        "Why did traffic drop on cell 12345?",
        "traffic fell by 12.5% on cell 10001",
        "availability 99.6 on cell 7",
        "why is 12/10 a problem",  # a short date needs "since"/"from" before it
        "проверь среди соседей",  # "среди" is not "среда"
        "why may 5xx errors rise",
    ],
)
def test_no_date(question: str) -> None:
    assert find_dates(question) == DateSpan()


def test_default_window_is_the_tail_of_the_data() -> None:
    window = resolve_window(find_dates("why did traffic drop on cell 1?"), now=ANCHOR)
    assert window.source == "default"
    assert window.recent_end == ANCHOR + timedelta(hours=1)  # includes the last sample
    assert window.recent_start == window.recent_end - timedelta(hours=72)
    assert window.baseline_end == window.recent_start
    assert window.baseline_start == window.recent_start - timedelta(hours=504)


def test_window_from_the_question() -> None:
    window = resolve_window(find_dates("с понедельника"), now=ANCHOR, baseline_hours=168)
    assert window.source == "question"
    assert window.expression == "понедельника"
    assert window.recent_start == day(10, 12)
    assert window.recent_end == ANCHOR + timedelta(hours=1)
    assert window.baseline_start == day(10, 5)


def test_until_date_ends_the_recent_window() -> None:
    window = resolve_window(find_dates("from 1 October to 5 October"), now=ANCHOR)
    assert (window.recent_start, window.recent_end) == (day(10, 1), day(10, 6))


def test_a_date_after_the_data_falls_back_to_the_default_window() -> None:
    window = resolve_window(find_dates("since 2027-01-01"), now=ANCHOR, recent_hours=24)
    assert window.source == "default"
    assert window.recent_start == ANCHOR + timedelta(hours=1) - timedelta(hours=24)


def test_windows_are_timezone_aware_utc() -> None:
    with pytest.raises(ValueError, match="naive"):
        resolve_window(DateSpan(), now=datetime(2026, 10, 15, 23))  # noqa: DTZ001
    other_zone = ANCHOR.astimezone(ZoneInfo("Europe/Moscow"))
    window = resolve_window(DateSpan(), now=other_zone)
    assert window.recent_end.utcoffset() == timedelta(0)
    with pytest.raises(ValidationError):
        TimeWindow(
            recent_start=day(10, 2),
            recent_end=day(10, 1),
            baseline_start=day(9, 1),
            baseline_end=day(10, 1),
            source="default",
        )


RU_MONTHS = "января февраля марта апреля мая июня июля августа сентября октября ноября декабря"
EN_MONTHS = "January February March April May June July August September October November December"


@pytest.mark.parametrize("month", range(1, 13))
def test_every_month_name(month: int) -> None:
    ru, en = RU_MONTHS.split()[month - 1], EN_MONTHS.split()[month - 1]
    assert since(f"с 1 {ru} 2025") == day(month, 1, 2025)
    assert since(f"since 1 {en} 2025") == day(month, 1, 2025)
    assert since(f"since {en[:3]} 1, 2025") == day(month, 1, 2025)
