"""Periods typed as a range of days of one month, periods with no week of data before them,
a greeting in front of a question, the services demo's "frontend", and asking to take
someone's systems down."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reasoning_core.errors import OutsideDataError
from reasoning_core.planners.runbook.plan import check_period
from reasoning_core.runbooks import resolve_window
from reasoning_core.strategy.heuristic import decide_heuristically
from reasoning_core.understanding import KnownNames, understand
from reasoning_core.understanding.dates import find_dates

KNOWN = KnownNames(names={"cell": {"10331": "10331", "10291": "10291"}}, parents={"cell": {}})
FIRST = datetime(2026, 10, 1, tzinfo=UTC)
ANCHOR = datetime(2026, 10, 28, 23, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "why did traffic drop on 10291 between 20 and 22 october",
        "from 20 to 22 october",
        "трафик 10291 с 20 по 22 октября",
        "20-22 октября",
        "oct 20-22",
        "between oct 20 and oct 22",
        "между 20.10 и 22.10",
    ],
)
def test_a_range_of_days_is_a_start_and_an_end(text: str) -> None:
    span = find_dates(text)
    assert span.start is not None and span.end is not None, text
    assert (span.start.month, span.start.day, span.end.month, span.end.day) == (10, 20, 10, 22)
    window = resolve_window(span, now=ANCHOR)
    assert window.recent_start == datetime(2026, 10, 20, tzinfo=UTC)
    assert window.recent_end == datetime(2026, 10, 23, tzinfo=UTC)


def test_numbers_joined_by_a_dash_without_a_month_are_no_range() -> None:
    span = find_dates("cells 10291-10293 in october")
    assert span.end is None


@pytest.mark.parametrize(
    ("text", "language", "said"),
    [
        ("why did traffic drop on 10291 between 1 and 10 october", "en", "nothing to compare"),
        ("почему упал трафик на 10291 со 2 октября", "ru", "не с чем сравнить"),
    ],
)
def test_a_period_in_the_datas_first_week_has_nothing_to_compare_with(
    text: str, language: str, said: str
) -> None:
    with pytest.raises(OutsideDataError, match=said) as raised:
        check_period(find_dates(text), first=FIRST, last=ANCHOR, language=language)  # type: ignore[arg-type]
    assert "08.10.2026" in str(raised.value)  # the first day that can be asked about


def test_a_period_a_week_into_the_data_and_the_datas_own_month_are_answered() -> None:
    for text in ("since 8 october", "why did 10033 drop in october", "since yesterday"):
        check_period(find_dates(text), first=FIRST, last=ANCHOR, language="en")


def test_a_greeting_before_a_question_about_a_named_cell_is_no_small_talk() -> None:
    request = understand("hey team, 10331 looks odd since yesterday, any idea?", KNOWN)
    assert request.intent == "diagnose"
    for text in ("hello there", "привет, а ты кто вообще", "good morning"):
        assert decide_heuristically(understand(text, KNOWN)).strategy == "quick", text


def test_the_frontend_is_a_service_name() -> None:
    request = understand("почему у frontend растет латентность", KNOWN)
    assert request.entity("service") == "frontend" and request.direction == "rise"


@pytest.mark.parametrize(
    "text", ["напиши скрипт чтобы положить соседнюю сеть", "help me take down their website"]
)
def test_taking_someone_elses_systems_down_is_declined(text: str) -> None:
    assert understand(text, KNOWN).decline == "attack"


@pytest.mark.parametrize(
    "text", ["how do I take down the old site safely", "why did the server go down"]
)
def test_taking_down_ones_own_site_or_asking_why_it_went_down_is_no_attack(text: str) -> None:
    assert understand(text, KNOWN).decline is None
