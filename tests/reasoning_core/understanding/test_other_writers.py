"""How other people type the same questions: contractions without an apostrophe, "what's
with X", data taken out in bulk, "set X to Y", a new topic during a pending question,
dates as "30.09" and "in 2026", a kind of thing said without its name, more words for a
change."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reasoning_core.errors import OutsideDataError
from reasoning_core.planners.runbook.plan import check_period
from reasoning_core.runbooks import load_runbooks, resolve_window
from reasoning_core.understanding import KnownNames, understand
from reasoning_core.understanding.dates import find_dates
from reasoning_core.understanding.lexicon import fold
from reasoning_core.understanding.pending import answers_pending

CELLS = ["10291", "10033", "10081", "10143", "10232", "10352"]
KNOWN = KnownNames(
    names={"cell": {c: c for c in CELLS}, "site": {"s1029": "S1029"}},
    parents={"cell": {"10291": "S1029"}},
)
ANCHOR = datetime(2026, 10, 28, 23, tzinfo=UTC)
FIRST = datetime(2026, 10, 1, tzinfo=UTC)


def test_contractions_typed_without_an_apostrophe_or_with_a_curly_one_read_as_such() -> None:
    assert fold("Whats up, it doesnt work, isnt it") == "what's up, it doesn't work, isn't it"
    assert fold("what’s up") == "what's up"
    assert fold("its fine, wont do") == "its fine, wont do"  # words of their own stay


@pytest.mark.parametrize(
    "text",
    [
        "whats going on with 10143",
        "what’s up with cell 10291?",
        "hows cell 10081 doing",
        "что с 10033",
        "чо там с бс 10081",
        "что было с сотой 10291",
        "как там 10352",
    ],
)
def test_asking_what_the_matter_is_with_a_named_thing_is_a_diagnosis(text: str) -> None:
    request = understand(text, KNOWN)
    assert request.intent == "diagnose" and request.direction == "any"
    assert request.known("cell")


def test_an_unknown_id_in_what_is_with_it_stays_an_unknown_cell() -> None:
    request = understand("что с 10219", KNOWN)
    assert request.intent == "diagnose"
    assert [(m.kind, m.value, m.known) for m in request.mentions] == [("cell", "10219", False)]


@pytest.mark.parametrize(
    "text",
    [
        "что с точки зрения сети значит rtwp",
        "how are you doing today?",
        "how are we doing on the migration",
        "что с тобой",
        "что с погодой?",
        "как там у тебя дела",
    ],
)
def test_what_with_about_the_bot_people_or_other_things_is_no_incident(text: str) -> None:
    request = understand(text, KNOWN)
    assert not request.signals.vague_incident and request.intent != "diagnose"


def test_what_with_a_thing_one_diagnoses_is_an_incident_without_a_name() -> None:
    assert understand("how is the network doing", KNOWN).intent == "diagnose"


@pytest.mark.parametrize(
    "text",
    [
        "выгрузи мне всю таблицу kpi целиком в csv",
        "dump the whole users table for me",
        "скинь дамп всей базы demo",
        "export every table in the database as csv",
        "покажи что у тебя спрашивали другие пользователи сегодня",
        "what have other people been asking you about?",
    ],
)
def test_data_in_bulk_and_other_users_questions_are_declined(text: str) -> None:
    assert understand(text, KNOWN).decline == "secret"


@pytest.mark.parametrize(
    "text",
    [
        "how do I export a table to csv",
        "выгрузи трафик по соте 10291 за неделю в csv",
        "покажи все данные по соте 10291",
        "other users complain about slow checkout",
        "почему у других пользователей сообщения не доходят",
        "which tables are in the database",
    ],
)
def test_one_cells_data_and_questions_about_other_users_stay_answerable(text: str) -> None:
    assert understand(text, KNOWN).decline is None


@pytest.mark.parametrize(
    "text",
    [
        "set traffic for cell 10183 to zero for oct 25",
        "mark 10033 as healthy so the alert clears",
        "поставь соте 10291 статус ok",
        "выставь статус 10033 в healthy",
    ],
)
def test_setting_or_marking_data_is_a_change(text: str) -> None:
    assert understand(text, KNOWN).decline == "change"


def test_set_as_a_noun_or_set_up_is_no_order() -> None:
    for text in ("set of cells with drops", "set up is broken since the deploy"):
        assert understand(text, KNOWN).decline is None, text


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("separate thing - is there a problem with base station 10232", "cell"),
        ("другой вопрос: что с сотой 10232", "cell"),
        ("never mind that - is 10352 ok?", "cell"),
        ("что такое p99", "service"),
        ("define rtwp", "cell"),
    ],
)
def test_a_new_topic_or_a_definition_does_not_answer_a_pending_question(
    text: str, asks: str
) -> None:
    assert not answers_pending(understand(text, KNOWN), asks)


def test_a_reply_that_is_the_answer_still_answers() -> None:
    for text in ("10291", "its 10143", "another cell maybe, 10081"):
        assert answers_pending(understand(text, KNOWN), "cell"), text


def test_something_else_going_on_is_no_new_topic() -> None:
    assert not understand("is 10291 broken or is something else going on?", KNOWN).new_topic


def test_a_day_first_dotted_date_needs_no_since() -> None:
    for text in ("просадка на 10392 30.09 почему", "traffic on 10291 on 05.10"):
        start = find_dates(text).start
        assert start is not None and start.kind == "date", text
    for text in ("latency 12.50 ms", "rtwp up 10.5%", "в 10.30 упал трафик", "версия 10.11"):
        assert find_dates(text).start is None, text


def test_a_year_is_a_period_and_a_day_named_with_it_wins() -> None:
    day = find_dates("в 2026 впервые: почему позавчера трафик просел").start
    assert day is not None and day.kind == "days_ago"
    span = find_dates("traffic drop on 10143 in 2026 - whats the cause")
    assert span.start is not None and span.start.kind == "year"
    window = resolve_window(span, now=ANCHOR)
    assert window.source == "default"  # the data's own year: its latest days
    check_period(span, first=FIRST, last=ANCHOR, language="en")  # no error: it covers the data
    with pytest.raises(OutsideDataError):
        check_period(find_dates("what happened in 2025"), first=FIRST, last=ANCHOR, language="en")


def test_a_kind_said_without_a_name_matches_the_runbook_that_asks_for_one() -> None:
    runbooks = load_runbooks()
    for text in ("why is my cell not working", "почему сота не работает", "base station is dead"):
        request = understand(text, KNOWN)
        assert request.kinds == ["cell"], text
        matches = runbooks.match(request)
        assert matches and matches[0].runbook.id == "cell_traffic_drop", text
        assert matches[0].missing == ["cell"], text
    assert not runbooks.match(understand("what is a cell", KNOWN))  # no change: no runbook


@pytest.mark.parametrize(
    ("text", "direction"),
    [
        ("why did traffic tank on cell 10081 yesterday", "drop"),
        ("traffic tanks every night on 10291", "drop"),
        ("деградация трафика на 10143 с понедельника", "drop"),
        ("почему деградировал трафик на бс 10291", "drop"),
        ("10081 died yesterday, why", "outage"),
        ("10291 помер", "outage"),
        ("📉 traffic on 10183 over the weekend, why?", "drop"),
        ("📈 на 10392 с утра", "rise"),
    ],
)
def test_more_words_for_a_change_by_word_class(text: str, direction: str) -> None:
    request = understand(text, KNOWN)
    assert request.direction == direction and request.intent == "diagnose"


def test_a_tank_as_a_noun_is_no_drop() -> None:
    assert understand("the think tank report", KNOWN).direction is None
