"""Dates as a question says them, in English and Russian: the grammar, before any anchor.

`find_dates` reads the question into unresolved `DateExpr`s ("12 October",
"вчера", "с понедельника"), the first start and the first end as a `DateSpan`;
``date_expr.py`` resolves them against an anchor. Investigation windows built from
these dates live in reasoning_core/runbooks/timewindow.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

from reasoning_core.understanding.date_expr import DateExpr, DateSpan
from reasoning_core.understanding.ordinals import (
    COUNT,
    EN_DAY,
    EN_LATE_DAY,
    RU_DAY,
    RU_LATE_DAY,
    count_number,
    day_number,
)

__all__ = ["DateExpr", "DateSpan", "date_spans", "find_dates"]

_EN_MONTHS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_RU_MONTHS = {
    "янв": 1,
    "фев": 2,
    "мар": 3,
    "апр": 4,
    "ма": 5,
    "июн": 6,
    "июл": 7,
    "авг": 8,
    "сен": 9,
    "окт": 10,
    "ноя": 11,
    "дек": 12,
}
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_RU_WEEKDAYS = ("пон", "вто", "сре", "чет", "пят", "суб", "вос")

_EN_MONTH = (
    r"(january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
)
_RU_MONTH = (
    r"(январ[ьяе]|феврал[ьяе]|март[ае]?|апрел[ьяе]|ма[йяе]|июн[ьяе]|июл[ьяе]|август[ае]?"
    r"|сентябр[ьяе]|октябр[ьяе]|ноябр[ьяе]|декабр[ьяе])"
)
_ORD = r"(?:st|nd|rd|th|-?го|-?е)?"
_YEAR = r"(?:,?\s+(\d{4})(?!\d)(?:\s*(?:г\.|года?))?)?"
_RU_WEEKDAY = (
    r"(понедельник\w*|вторник\w*|сред[аыуе]|средой|четверг\w*|пятниц[аыуе]|пятницей"
    r"|суббот[аыуе]|субботой|воскресень[еяю]|воскресеньем)"
)
#: Words after an ordinal that make it no date: "the 3rd sector", "третьего раза".
_NOT_A_DAY_EN = (
    r"(?!\s+(?:sector|cell|site|party|floor|time|place|percentile|gen\w*|quarter|hour|week"
    r"|day|minute|attempt|largest|biggest|most|line|level|try|option|one|tier|row)s?\b)"
)
_NOT_A_DAY_RU = (
    r"(?!\s+(?:сектор|сот|бс|ячейк|станц|раз|мест|час|этаж|квартал|уровн|попыт|вариант|линии"
    r"|недел|минут|дн|год|ряд)\w*)"
)
_SINCE = re.compile(
    r"\b(?:since|from|starting(?:\s+(?:from|on))?|after|с|со|от|начиная\s+с|после)\s*$"
)
_UNTIL = re.compile(r"\b(?:until|till|to|through|up\s+to|по|до)\s*$")
#: The second date of "between oct 20 and oct 22", "между 20.10 и 22.10": an "until" date.
_BETWEEN_AND = re.compile(r"\b(?:between|между)\b.{1,30}\s(?:and|и)\s*$")
#: Two days of one month: "1-10 октября", "с 1 по 10 октября", "between 1 and 10 october",
#: "from 1st to 10th of oct", "oct 1-10", "october 20 to 22" -> a start and an "until" day.
_RANGE_JOIN = r"\s*(?:[-–—]|to|till|until|through|and|по|до|и)\s*"
_DAY_RANGES = (
    re.compile(
        rf"(?<![\w.])(?:(?:between|from|между|с|со)\s+)?(\d{{1,2}}){_ORD}{_RANGE_JOIN}"
        rf"(\d{{1,2}}){_ORD}\s+(?:of\s+)?(?:{_EN_MONTH}|{_RU_MONTH})(?!\w){_YEAR}"
    ),
    re.compile(
        rf"\b(?:(?:between|from)\s+)?{_EN_MONTH}\.?\s+(\d{{1,2}}){_ORD}{_RANGE_JOIN}"
        rf"(\d{{1,2}}){_ORD}(?![\w.]){_YEAR}"
    ),
)

Builder = Callable[[re.Match[str]], DateExpr | None]

#: Units after a number that make "12.50" a measurement, not the 12th of a month.
_NOT_A_DATE_UNIT = (
    r"(?!\s*(?:%|x\b|times\b|раз\w*|db\w*|дб\w*|ms\b|мс\b|s\b|с\b|сек\w*|sec\w*"
    r"|gb\b|гб\b|mb\b|мб\b|kb\b|кб\b|tb\b|тб\b|k\b|к\b|erl\w*|эрл\w*|mbps|мбит\w*))"
)


def _full_year(text: str | None) -> int | None:
    if text is None:
        return None
    return int(text) + 2000 if len(text) == 2 else int(text)  # noqa: PLR2004


def _date(text: str, year: int | None, month: int, day: int) -> DateExpr | None:
    try:
        date(year or 2000, month, day)  # 2000 is a leap year: 29.02 stays possible
    except ValueError:
        return None
    return DateExpr(kind="date", text=text, year=year, month=month, day=day)


def _whole_month(text: str, year: int | None, month: int) -> DateExpr | None:
    expr = _date(text, year, month, 1)
    return expr.model_copy(update={"whole_month": True}) if expr is not None else None


def _numeric(m: re.Match[str]) -> DateExpr | None:
    day, month = int(m.group(1)), int(m.group(2))
    if month > 12 >= day:  # noqa: PLR2004 - 10/25 can only be month/day
        day, month = month, day
    year = m.group(3) if m.re.groups >= 3 else None  # noqa: PLR2004
    return _date(m.group(0), _full_year(year), month, day)


_VERSION_BEFORE = re.compile(r"(?:\bv|version|release|build|версии|версия|релиз\w*|сборк\w*)\s*$")


def _unmarked_day(m: re.Match[str]) -> DateExpr | None:
    """ "30.09" without "since": a day and month, unless a version precedes it ("v 10.11")."""
    if _VERSION_BEFORE.search(m.string[max(0, m.start() - 12) : m.start()]):
        return None
    return _date(m.group(0), None, int(m.group(2)), int(m.group(1)))


def _relative(days: int) -> Builder:
    return lambda m: DateExpr(kind="days_ago", text=m.group(0), days_ago=days)


def _count(group: int, factor: int) -> Builder:
    def build(m: re.Match[str]) -> DateExpr:
        raw = m.group(group)
        n = 1 if raw is None else (count_number(raw) or 1)
        return DateExpr(kind="days_ago", text=m.group(0), days_ago=n * factor)

    return build


def _day_of_month(m: re.Match[str]) -> DateExpr | None:
    raw = m.group(1)
    number = int(raw) if raw.isdigit() else day_number(raw)
    if number is None or not 1 <= number <= 31:  # noqa: PLR2004
        return None
    return DateExpr(kind="day", text=m.group(0), day=number)


def _spelled_date(day_group: int, month_group: int, year_group: int, months: str) -> Builder:
    def build(m: re.Match[str]) -> DateExpr | None:
        number = day_number(m.group(day_group))
        if number is None:
            return None
        word = m.group(month_group)
        month = _ru_month(word) if months == "ru" else _EN_MONTHS[word[:3]]
        return _date(m.group(0), _full_year(m.group(year_group)), month, number)

    return build


def _hours(m: re.Match[str]) -> DateExpr:
    hours = int(m.group(1))
    return DateExpr(kind="days_ago", text=m.group(0), days_ago=hours // 24)  # a day covers


def _week(weeks_ago: int) -> Builder:
    return lambda m: DateExpr(kind="week", text=m.group(0), weeks_ago=weeks_ago)


#: (pattern, builder, needs a since/until word before it)
_SEASON_MONTH: dict[str, int] = {
    "summer": 6,
    "летом": 6,
    "winter": 12,
    "зимой": 12,
    "spring": 3,
    "весной": 3,
    "autumn": 9,
    "fall": 9,
    "осенью": 9,
}

#: The first day of a part of a month: "в начале октября", "mid-September", "late Oct".
_PART = {"начале": 1, "early": 1, "середине": 11, "mid": 11, "конце": 21, "late": 21}

_PATTERNS: list[tuple[re.Pattern[str], Builder, bool]] = [
    (
        re.compile(rf"(?<!\w)с\s+(\d{{1,2}})\s+по\s+\d{{1,2}}\s+{_RU_MONTH}(?!\w){_YEAR}"),
        lambda m: _date(
            m.group(0), _full_year(m.group(3)), _ru_month(m.group(2)), int(m.group(1))
        ),
        False,
    ),
    (
        re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"),
        lambda m: _date(m.group(0), int(m.group(1)), int(m.group(2)), int(m.group(3))),
        False,
    ),
    (re.compile(r"\b(\d{1,2})[./](\d{1,2})[./](\d{4}|\d{2})\b"), _numeric, False),
    (re.compile(r"\b(\d{1,2})[./](\d{1,2})\b(?![./]\d)(?!\s*%)"), _numeric, True),
    # "30.09", "05.10" with no "since": the day-first dotted form, both parts of two digits,
    # no unit after it ("12.50 ms", "10.5%", "3.5x" stay numbers; "10.30" is no date, the
    # 30th month); "12/10" keeps needing "since" (a ratio, or month first)
    (
        re.compile(rf"(?<![\w.,:/-])(\d\d)\.(\d\d)(?![\w.,/%-]|[.,/]\d){_NOT_A_DATE_UNIT}"),
        _unmarked_day,
        False,
    ),
    (
        re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?{_EN_MONTH}\b\.?{_YEAR}"),
        lambda m: _date(
            m.group(0), _full_year(m.group(3)), _EN_MONTHS[m.group(2)[:3]], int(m.group(1))
        ),
        False,
    ),
    (
        re.compile(rf"\b{_EN_MONTH}\.?\s+(\d{{1,2}}){_ORD}\b{_YEAR}"),
        lambda m: _date(
            m.group(0), _full_year(m.group(3)), _EN_MONTHS[m.group(1)[:3]], int(m.group(2))
        ),
        False,
    ),
    (
        re.compile(rf"(?<!\w)({RU_DAY})\s+{_RU_MONTH}(?!\w){_YEAR}"),
        _spelled_date(1, 2, 3, "ru"),
        False,
    ),
    (
        re.compile(rf"\b(?:the\s+)?({EN_DAY})\s+(?:of\s+)?{_EN_MONTH}\b{_YEAR}"),
        _spelled_date(1, 2, 3, "en"),
        False,
    ),
    (
        re.compile(rf"\b{_EN_MONTH}\s+(?:the\s+)?({EN_DAY})\b{_YEAR}"),
        _spelled_date(2, 1, 3, "en"),
        False,
    ),
    (
        re.compile(rf"\b(\d{{1,2}}){_ORD}\s+{_RU_MONTH}(?!\w){_YEAR}"),
        lambda m: _date(
            m.group(0), _full_year(m.group(3)), _ru_month(m.group(2)), int(m.group(1))
        ),
        False,
    ),
    # A day of the month without the month: "27 числа", "с 25-го", "the 27th", "тридцатого".
    (re.compile(rf"(?<!\w)(\d{{1,2}}|{RU_DAY})(?:-?го)?\s+числа(?!\w)"), _day_of_month, False),
    (re.compile(r"(?<!\w)(\d{1,2})-?го(?!\w)"), _day_of_month, False),
    (
        re.compile(rf"(?<![\w.])(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)(?!\w){_NOT_A_DAY_EN}"),
        _day_of_month,
        False,
    ),
    (re.compile(rf"(?<!\w)({RU_LATE_DAY})(?!\w){_NOT_A_DAY_RU}"), _day_of_month, False),
    (re.compile(rf"(?<!\w)({RU_DAY})(?!\w){_NOT_A_DAY_RU}"), _day_of_month, True),
    (re.compile(rf"\bthe\s+({EN_LATE_DAY})\b{_NOT_A_DAY_EN}"), _day_of_month, False),
    (re.compile(rf"(?:\bthe\s+)?\b({EN_DAY})\b{_NOT_A_DAY_EN}"), _day_of_month, True),
    (re.compile(r"\bday\s+before\s+yesterday\b|\bпозавчера\w*"), _relative(2), False),
    (re.compile(r"\byesterday\b|\bвчера\w*"), _relative(1), False),
    (
        re.compile(
            r"\btoday\b|\bсегодня\w*|\bthis\s+(?:morning|afternoon|evening)\b|\btonight\b"
            r"|(?<!\w)с\s+утра(?!\w)"
        ),
        _relative(0),
        False,
    ),
    (re.compile(r"\blast\s+night\b|\bovernight\b"), _relative(1), False),
    (
        re.compile(r"\b(?:last|past|previous)\s+(\d{1,3})\s*(?:hours?|hrs?|h)\b"),
        _hours,
        False,
    ),
    (re.compile(r"(?<!\w)(?:за\s+)?последни[ех]\s+(\d{1,3})\s*час\w*"), _hours, False),
    (
        re.compile(
            r"(?<!\w)(?:за\s+|в\s+течени[ие]\s+)?(?:последни[ех]\s+)?сутк(?:и|ок)(?!\w)"
            r"|\b(?:last|past|previous)\s+(?:day|24\s*h)\b"
        ),
        _relative(1),
        False,
    ),
    (re.compile(r"(?<!\w)(?:за\s+)?(?:последни[ех]\s+)?двое\s+суток(?!\w)"), _relative(2), False),
    (re.compile(r"(?<!\w)(?:за\s+)?(?:последни[ех]\s+)?трое\s+суток(?!\w)"), _relative(3), False),
    (
        re.compile(
            r"\b(?:last|past|previous)\s+(?:few|several)\s+days\b|\brecent\s+days\b"
            r"|(?<!\w)последни[ех]\s+(?:несколько\s+)?дн(?:ей|и|я)(?!\w)"
        ),
        _relative(3),
        False,
    ),
    (
        re.compile(
            r"\b(?:last|past|previous)\s+couple(?:\s+of)?\s+days\b"
            r"|(?<!\w)(?:последни[ех]\s+)?пар[уы]\s+дн(?:ей|я)(?!\w)"
        ),
        _relative(2),
        False,
    ),
    (
        re.compile(
            r"\b(?:past|previous)\s+week\b|(?<!\w)за\s+(?:последн\w*\s+)?недел[юи](?!\w)"
            r"|(?<!\w)последн(?:юю|ей|яя)\s+недел[юиь](?!\w)"
        ),
        _relative(7),
        False,
    ),
    (
        re.compile(
            r"\b(?:(?:the|this|last|past)\s+)?weekend\b"
            r"|(?<!\w)(?:(?:с|со|на|в|за|после|эти|этих|прошлых|прошлые)\s+)?"
            r"выходн(?:ых|ые|ым)(?!\w)"
        ),
        lambda m: DateExpr(kind="weekday", text=m.group(0), weekday=5),
        False,
    ),
    (
        re.compile(
            r"\bthis\s+month\b|\b(?:the\s+)?(?:start|beginning)\s+of\s+(?:the|this)\s+month\b"
            r"|(?<!\w)(?:с\s+)?начала\s+месяца(?!\w)|(?<!\w)в\s+этом\s+месяце(?!\w)"
        ),
        lambda m: DateExpr(kind="day", text=m.group(0), day=1),
        False,
    ),
    (re.compile(rf"\b{COUNT}\s+days?\s+ago\b"), _count(1, 1), False),
    (re.compile(rf"(?<!\w){COUNT}\s+(?:день|дня|дней|суток)\s+назад(?!\w)"), _count(1, 1), False),
    (re.compile(rf"\b(?:last|past|previous)\s+{COUNT}\s+days\b"), _count(1, 1), False),
    (
        re.compile(
            rf"(?<!\w)(?:за\s+|в\s+течени[ие]\s+)?(?:последни[ехй]\s+)?{COUNT}\s+"
            r"(?:день|дня|дней|суток|сутки)(?!\w)"
        ),
        _count(1, 1),
        False,
    ),
    (re.compile(rf"\b{COUNT}\s+weeks?\s+ago\b"), _count(1, 7), False),
    (re.compile(rf"(?:(?<!\w){COUNT}\s+)?\bнедел[юиь]\s+назад\b"), _count(1, 7), False),
    (
        re.compile(
            r"\b(?:last|previous)\s+month\b|(?<!\w)(?:в\s+)?прошл(?:ом|ый|ого)\s+месяц\w*(?!\w)"
        ),
        lambda m: DateExpr(kind="month", text=m.group(0), months_ago=1),
        False,
    ),
    (
        re.compile(
            # a point a month back; "over the past month" is a window, no date
            r"\b(?:a|one)\s+month\s+ago\b|(?<!\w)месяц\s+назад(?!\w)"
        ),
        _relative(30),
        False,
    ),
    (
        re.compile(r"\bhalf\s+a\s+year\s+ago\b|(?<!\w)полгода\s+назад(?!\w)"),
        _relative(182),
        False,
    ),
    (re.compile(r"\btomorrow\b|(?<!\w)завтра(?!\w)"), _relative(-1), False),
    (
        re.compile(r"\bnext\s+week\b|(?<!\w)(?:на\s+)?следующ(?:ей|ую)\s+недел[еюи](?!\w)"),
        _week(-1),
        False,
    ),
    (re.compile(r"\blast\s+week\b|\bпрошл(?:ой|ую|ая|ого)\s+недел[иеюя]\b"), _week(1), False),
    (
        re.compile(r"\bthis\s+week\b|\bэт(?:ой|у|а)\s+недел[иеюя]\b|\bначала\s+недели\b"),
        _week(0),
        False,
    ),
    (
        re.compile(r"\b(?:(?:last|this|past)\s+)?(" + "|".join(_EN_WEEKDAYS) + r")\b"),
        lambda m: DateExpr(
            kind="weekday", text=m.group(0), weekday=_EN_WEEKDAYS.index(m.group(1))
        ),
        False,
    ),
    (
        re.compile(rf"\b{_RU_WEEKDAY}(?!\w)"),
        lambda m: DateExpr(
            kind="weekday", text=m.group(0), weekday=_RU_WEEKDAYS.index(m.group(1)[:3])
        ),
        False,
    ),
    # Whole months, quarters, seasons and years: their first day (a period's start).
    (
        re.compile(rf"(?<!\w)(?:в\s+)?(начале|середине|конце)\s+{_RU_MONTH}(?!\w){_YEAR}"),
        lambda m: _date(
            m.group(0), _full_year(m.group(3)), _ru_month(m.group(2)), _PART[m.group(1)]
        ),
        False,
    ),
    (
        re.compile(rf"\b(?:in\s+)?(early|mid|late)[\s-]+{_EN_MONTH}\b{_YEAR}"),
        lambda m: _date(
            m.group(0), _full_year(m.group(3)), _EN_MONTHS[m.group(2)[:3]], _PART[m.group(1)]
        ),
        False,
    ),
    (
        re.compile(rf"\b(?:in|back in|during|since|from)\s+{_EN_MONTH}\b{_YEAR}"),
        lambda m: _whole_month(m.group(0), _full_year(m.group(2)), _EN_MONTHS[m.group(1)[:3]]),
        False,
    ),
    (
        re.compile(rf"\b{_EN_MONTH}\.?,?\s+(\d{{4}})\b"),
        lambda m: _whole_month(m.group(0), int(m.group(2)), _EN_MONTHS[m.group(1)[:3]]),
        False,
    ),
    (
        re.compile(rf"(?<!\w)(?:в|во|с|за|до)\s+{_RU_MONTH}(?!\w){_YEAR}"),
        lambda m: _whole_month(m.group(0), _full_year(m.group(2)), _ru_month(m.group(1))),
        False,
    ),
    (
        re.compile(rf"(?<!\w){_RU_MONTH}\s+(\d{{4}})"),
        lambda m: _whole_month(m.group(0), int(m.group(2)), _ru_month(m.group(1))),
        False,
    ),
    (
        re.compile(r"\bq([1-4])\s*'?(\d{4})\b"),
        lambda m: _date(m.group(0), int(m.group(2)), 3 * int(m.group(1)) - 2, 1),
        False,
    ),
    (
        re.compile(
            r"(?<!\w)(summer|winter|spring|autumn|fall|летом|зимой|весной|осенью)"
            r"\s+(?:of\s+)?(\d{4})"
        ),
        lambda m: _date(m.group(0), int(m.group(2)), _SEASON_MONTH[m.group(1)], 1),
        False,
    ),
    (
        re.compile(
            r"\b(?:last|this|past|in\s+the|during\s+the|over\s+the)\s+"
            r"(summer|winter|spring|autumn|fall)\b"
            r"|(?<!\w)(?:(?:прошл\w*|эт\w*|в\s+прошл\w*)\s+)?(летом|зимой|весной|осенью)(?!\w)"
        ),
        lambda m: _date(m.group(0), None, _SEASON_MONTH[m.group(1) or m.group(2)], 1),
        False,
    ),
    (
        re.compile(r"\blast\s+year\b|(?<!\w)в\s+прошлом\s+году(?!\w)"),
        _relative(365),
        False,
    ),
    (
        re.compile(
            r"(?<!\w)(?:in|в|за|during|since|from|с|со|начиная\s+с)\s+((?:19|20)\d\d)"
            r"(?:\s*(?:г\.|году|года|год))?(?!\w)"
        ),
        lambda m: DateExpr(kind="year", text=m.group(0), year=int(m.group(1)), month=1, day=1),
        False,
    ),
]


def _ru_month(word: str) -> int:
    if word.startswith("ма") and not word.startswith("мар"):  # май, мая, мае (not март)
        return _RU_MONTHS["ма"]
    return _RU_MONTHS[word[:3]]


def _day_ranges(text: str) -> list[tuple[int, int, DateExpr, str | None]]:
    """The two days of each "1-10 октября" / "oct 1-10" range: a start and an "until" day."""
    found: list[tuple[int, int, DateExpr, str | None]] = []
    for index, pattern in enumerate(_DAY_RANGES):
        for m in pattern.finditer(text):
            if index == 0:
                first, last, en, ru, year = m.groups()
                month = _EN_MONTHS[en[:3]] if en else _ru_month(ru)
            else:
                en, first, last, year = m.groups()
                month = _EN_MONTHS[en[:3]]
            start = _date(m.group(0), _full_year(year), month, int(first))
            end = _date(m.group(0), _full_year(year), month, int(last))
            if start is None or end is None or int(last) <= int(first):
                continue
            middle = m.start() + (m.end() - m.start()) // 2
            found += [(m.start(), middle, start, None), (middle, m.end(), end, "until")]
    return found


def _candidates(text: str) -> list[tuple[int, int, DateExpr, str | None]]:
    """Every date expression with its span and marker ("since"/"until"/None), no overlaps."""
    found = _day_ranges(text)
    for pattern, build, needs_marker in _PATTERNS:
        for m in pattern.finditer(text):
            if any(s < m.end() and m.start() < e for s, e, _, _ in found):
                continue  # an earlier, more specific pattern already took this text
            before = text[max(0, m.start() - 24) : m.start()]
            between = _BETWEEN_AND.search(text[max(0, m.start() - 40) : m.start()])
            marker = (
                "until"
                if _UNTIL.search(before) or between
                else "since"
                if _SINCE.search(before)
                else None
            )
            if needs_marker and marker is None:
                continue
            expr = build(m)
            if expr is not None:
                found.append((m.start(), m.end(), expr, marker))
    return sorted(found, key=lambda item: item[0])


def date_spans(text: str) -> list[tuple[int, int]]:
    """Where the date expressions stand in `text` (lower-cased), as (start, end) pairs."""
    return [(start, end) for start, end, _, _ in _candidates(text.lower())]


def find_dates(text: str) -> DateSpan:
    """The first date that is not an "until" date is the start; the first "until" one the end.

    A year ("in 2026") is the start only when no day, week or month is named, and a whole
    month ("в октябре") only when no day or week is: "в 2026 ... позавчера" asks about the
    day before yesterday. A future day ("tomorrow", "next week")
    is the start only when nothing past is named: "у нас завтра планёрка ... почему упал
    трафик с понедельника" asks about Monday on.
    """
    candidates = _candidates(text.lower())
    starts = [e for _, _, e, marker in candidates if marker != "until"]
    past = [e for e in starts if not _future(e)]
    starts = past or starts
    start = next(
        (e for e in starts if e.kind != "year" and not e.whole_month),
        next((e for e in starts if e.kind != "year"), starts[0] if starts else None),
    )
    end = next((e for _, _, e, marker in candidates if marker == "until"), None)
    return DateSpan(start=start, end=end)


def _future(expr: DateExpr) -> bool:
    """ "tomorrow", "next week": a day after the anchor, whatever the anchor is."""
    return any((count or 0) < 0 for count in (expr.days_ago, expr.weeks_ago, expr.months_ago))
