"""Questions of benchmark cases, in English and Russian, with and without "since DATE".

Phrasings and date formats vary on purpose (ISO, day-month names, dotted
Russian dates, years left out, weekday names) so a planner cannot lean on one form.
"""

from __future__ import annotations

import random
from datetime import date

Language = str  # "en" | "ru"

_EN = (
    "Why did traffic drop on cell {cell}{since}?",
    "Why has traffic on cell {cell} fallen{since}?",
    "What caused the traffic drop on cell {cell}{since}?",
    "Cell {cell} is carrying less traffic{since}. Why?",
    "Traffic on cell {cell} went down{since} - what happened?",
    "why is traffic lower on cell {cell}{since}",
)
_RU = (
    "Почему упал трафик на соте {cell}{since}?",
    "Почему снизился трафик на соте {cell}{since}?",
    "Из-за чего просел трафик соты {cell}{since}?",
    "Что случилось с трафиком на соте {cell}{since}?",
    "Трафик на соте {cell} упал{since}, в чём причина?",
    "почему на соте {cell} стало меньше трафика{since}",
)
_EN_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_RU_MONTHS = (
    "января",
    "февраля",
    "марта",
    "апреля",
    "мая",
    "июня",
    "июля",
    "августа",
    "сентября",
    "октября",
    "ноября",
    "декабря",
)
_EN_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_RU_WEEKDAYS = (
    "понедельника",
    "вторника",
    "среды",
    "четверга",
    "пятницы",
    "субботы",
    "воскресенья",
)


def _en_date(rng: random.Random, day: date) -> str:
    month = _EN_MONTHS[day.month - 1]
    return rng.choice(
        (
            day.isoformat(),
            f"{month} {day.day}",
            f"{month[:3]} {day.day}, {day.year}",
            f"{day.day} {month} {day.year}",
        )
    )


def _ru_date(rng: random.Random, day: date) -> str:
    month = _RU_MONTHS[day.month - 1]
    return rng.choice(
        (
            f"{day:%d.%m.%Y}",
            f"{day:%d.%m}",
            f"{day.day} {month}",
            f"{day.day} {month} {day.year}",
            day.isoformat(),
        )
    )


def question(
    rng: random.Random,
    language: Language,
    cell: str,
    since: date | None = None,
    *,
    weekday_ok: bool = False,
) -> str:
    """One question about `cell`; with `since`, it names that day (maybe as a weekday)."""
    template = rng.choice(_EN if language == "en" else _RU)
    if since is None:
        return template.format(cell=cell, since="")
    use_weekday = weekday_ok and rng.random() < 0.25  # noqa: PLR2004
    if language == "en":
        when = _EN_WEEKDAYS[since.weekday()] if use_weekday else _en_date(rng, since)
        return template.format(cell=cell, since=f" since {when}")
    when = _RU_WEEKDAYS[since.weekday()] if use_weekday else _ru_date(rng, since)
    return template.format(cell=cell, since=f" с {when}")
