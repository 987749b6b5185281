"""Days written as words or without a month, and relative periods as people type them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reasoning_core.understanding.dates import find_dates
from reasoning_core.understanding.ordinals import day_number

#: The demo data's last hour: Wednesday 28 October 2026, 23:00 UTC.
ANCHOR = datetime(2026, 10, 28, 23, tzinfo=UTC)


def day(month: int, d: int, year: int = 2026) -> datetime:
    return datetime(year, month, d, tzinfo=UTC)


def since(question: str, now: datetime = ANCHOR) -> datetime | None:
    start = find_dates(question).start
    return start.resolve(now) if start is not None else None


@pytest.mark.parametrize(
    ("words", "number"),
    [
        ("тридцатого", 30),
        ("двадцать седьмого", 27),
        ("третьего", 3),
        ("четвёртого", 4),
        ("первое", 1),
        ("twenty-seventh", 27),
        ("twentyseventh", 27),
        ("thirtieth", 30),
        ("first", 1),
        ("сорокового", None),
    ],
)
def test_ordinals_in_words(words: str, number: int | None) -> None:
    assert day_number(words) == number


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("что случилось с трафиком 10392 двадцать седьмого октября", day(10, 27)),
        ("что было тридцатого сентября", day(9, 30)),
        ("why did traffic drop on the twenty-seventh of october", day(10, 27)),
        ("traffic on october twenty seventh", day(10, 27)),
        ("а двадцать седьмого что было", day(10, 27)),
        ("с двадцать пятого трафик ниже", day(10, 25)),
        ("since the 26th", day(10, 26)),
        ("what happened on the 27th", day(10, 27)),
        ("с 25-го просел", day(10, 25)),
        ("упал 27 числа", day(10, 27)),
        ("since the 30th", day(9, 30)),  # no 30th yet this month: the last month's
        ("since the 31st", day(8, 31)),  # September has no 31st
        ("с начала месяца", day(10, 1)),
        ("traffic on 10291 is down since 2025", day(1, 1, 2025)),  # a year, not a cell
        ("с 2025 года", day(1, 1, 2025)),
    ],
)
def test_a_day_in_words_or_without_its_month(question: str, expected: datetime) -> None:
    assert since(question) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("за последние сутки", day(10, 27)),
        ("over the last 24 hours", day(10, 27)),
        ("last 3 hours", day(10, 28)),
        ("за последние 48 часов", day(10, 26)),
        ("since this morning", day(10, 28)),
        ("трафик упал с утра", day(10, 28)),
        ("last night", day(10, 27)),
        ("трафик подрос за последние дни", day(10, 25)),
        ("over the past couple of days", day(10, 26)),
        ("за последнюю неделю", day(10, 21)),
        ("since the weekend", day(10, 24)),
        ("с выходных", day(10, 24)),
        ("last summer", day(6, 1)),
        ("прошлым летом", day(6, 1)),
        ("this month", day(10, 1)),
        ("last month", day(9, 1)),
        ("в прошлом месяце", day(9, 1)),
        ("месяц назад", day(9, 28)),
        ("две недели назад", day(10, 14)),
        ("полгода назад", day(4, 29)),
        ("в начале октября", day(10, 1)),
        ("mid-september", day(9, 11)),
        ("в конце сентября", day(9, 21)),
        ("tomorrow", day(10, 29)),  # after the data: the answer says which period there is
        ("на следующей неделе", day(11, 2)),
    ],
)
def test_relative_periods(question: str, expected: datetime) -> None:
    assert since(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "the 3rd sector of site S1029",
        "с третьего сектора",
        "третьего раза не будет",
        "the first time it dropped",
        "is traffic falling",
    ],
)
def test_ordinals_that_are_no_dates(question: str) -> None:
    assert find_dates(question).start is None
