"""Questions as people type them: slang, typos, other words for a cell, noise, glued SQL,
lead-ins, and replies that point back at a pending question."""

from __future__ import annotations

import pytest

from reasoning_core.understanding import KnownNames, understand
from reasoning_core.understanding.pending import answers_pending
from reasoning_core.understanding.typos import correct_typos, one_edit

CELLS = ["10291", "10033", "10081", "10143", "10392"]
KNOWN = KnownNames(
    names={"cell": {c: c for c in CELLS}, "site": {"s1029": "S1029"}},
    parents={"cell": {"10291": "S1029"}},
)


@pytest.mark.parametrize(
    ("text", "direction"),
    [
        ("10291 тухнет с утра", "outage"),
        ("бс 10291 лег", "outage"),
        ("cell 10291 flatlined", "outage"),
        ("gNB 10291 went dark overnight", "outage"),
        ("10033 периодически отваливается", "outage"),
        ("traffic on 10081 plunged", "drop"),
        ("на 10143 трафика стало меньше", "drop"),
        ("на бс 10143 трафик подрос за последние дни", "rise"),
        ("почему на 10392 трафика стало больше", "rise"),
        ("traffic on 10392 skyrocketed", "rise"),
        ("почему 500-ки посыпались", "spike"),
        ("why did traffic on 10183 double over the weekend", "rise"),
        ("why is 10392 busier than usual", "rise"),
        ("10392 перегружена с 25-го", "rise"),
        ("10291 traffic went to zero", "drop"),
        ("почему на 10392 трафик перетёк на соседей", "drop"),
        ("10291 перестала работать", "outage"),
        ("10331 is acting up", "any"),
    ],
)
def test_slang_for_drops_outages_and_rises_by_stem(text: str, direction: str) -> None:
    request = understand(text, KNOWN)
    assert request.direction == direction
    assert request.intent == "diagnose"


def test_errors_written_with_a_russian_suffix_are_errors() -> None:
    assert "errors" in understand("почему 500-ки посыпались", KNOWN).metrics
    assert "errors" in understand("откуда 502-е на checkout", KNOWN).metrics


@pytest.mark.parametrize(
    "text",
    [
        "почему на станции 10291 упал трафик",
        "station 10291 traffic dropped",
        "почему на ячейке 10291 упал трафик",
        "базовка 10291 упала",
        "gnb-10291 traffic dropped",
        "почему трафик на eNodeB 10291 упал",
    ],
)
def test_other_words_for_a_cell_label_it(text: str) -> None:
    [mention] = understand(text, KNOWN).known("cell")
    assert (mention.value, mention.labelled) == ("10291", True)


def test_a_word_for_a_cell_is_no_service_name() -> None:
    for text in ("enb down since this morning, why?", "gnb is down", "station down"):
        request = understand(text, KNOWN)
        assert request.known("service") == [] and request.intent == "diagnose", text


def test_a_number_sign_glued_to_an_id_after_nfkc() -> None:
    # NFKC makes "№10392" into "No10392"
    assert understand("трафик на соте №10392 упал, почему", KNOWN).entity("cell") == "10392"
    assert understand("traffic drop on cell nr.10392", KNOWN).entity("cell") == "10392"


@pytest.mark.parametrize(
    "text",
    [
        "why did traffic drop on cell 10033'; DROP TABLE demo.cells;--",
        'трафик на соте 10033" OR 1=1 -- просел с понедельника, почему',
        "why did traffic drop on cell 10033 UNION SELECT password FROM users",
        "почему упал трафик на соте 10033 /* drop table cells */",
    ],
)
def test_sql_glued_to_a_name_leaves_the_question_a_question(text: str) -> None:
    request = understand(text, KNOWN)
    assert request.decline is None and request.intent == "diagnose"
    assert request.entity("cell") == "10033"


def test_sql_that_is_the_whole_message_is_still_declined() -> None:
    assert understand("'; DROP TABLE demo.cells;--", KNOWN).decline == "change"
    assert understand("update hour_stats set traffic=0 where cellname='10081'").decline


def test_typos_one_edit_from_a_key_word_are_read_as_it() -> None:
    assert correct_typos("why did trafic dorp on celll 10291") == (
        "why did traffic drop on cell 10291"
    )
    assert correct_typos("трафк на 10232 упол, почму") == "трафик на 10232 упал, почему"
    request = understand("why did trafic dorp on celll 10291", KNOWN)
    assert (request.metrics, request.direction) == (["traffic"], "drop")
    assert request.text == "why did trafic dorp on celll 10291"  # the user's words are kept


def test_real_words_near_a_key_word_stay_themselves() -> None:
    # "call" is one letter from "cell", "прошел" one from "просел": short key words take no
    # changed letter, and words the rules read are never touched.
    assert correct_typos("dropped calls on a call") == "dropped calls on a call"
    assert correct_typos("прошел день, упор") == "прошел день, упор"
    assert correct_typos("web-3 cel1 trafic-x") == "web-3 cel1 trafic-x"
    assert one_edit("dorp", "drop") and one_edit("trafic", "traffic")
    assert not one_edit("trafk", "traffic") and not one_edit("cell", "cell")


def test_all_caps_emoji_and_noise_around_the_question() -> None:
    request = understand("🔥🔥 ПОЧЕМУ УПАЛ ТРАФИК НА БС 10291??? 😡😡", KNOWN)
    assert (request.entity("cell"), request.direction, request.intent) == (
        "10291",
        "drop",
        "diagnose",
    )


def test_a_year_is_no_id_but_a_labelled_one_is_a_name() -> None:
    request = understand("почему трафик на 10291 упал в 2025", KNOWN)
    assert [m.value for m in request.mentions] == ["10291"]
    assert request.dates.start is not None and request.dates.start.year == 2025


@pytest.mark.parametrize(
    "text", ["what is going on?", "so what is wrong", "what is the issue with traffic"]
)
def test_asking_what_is_wrong_is_no_definition(text: str) -> None:
    assert understand(text, KNOWN).intent == "diagnose"


def test_a_lead_in_before_a_definition_is_skipped() -> None:
    for text in ("wait, what is uplink noise exactly", "слушай, а что такое rtwp"):
        request = understand(text, KNOWN)
        assert request.intent == "explain" and request.complete, text
        assert not answers_pending(request, "cell")


@pytest.mark.parametrize(
    ("text", "refers"),
    [
        ("трафик на ней просел, почему так", True),
        ("why is it dropping", True),
        ("what happened there", True),
        ("is there a problem", False),
        ("hi there!", False),
        ("why did traffic drop on cell 10081", False),
    ],
)
def test_a_reply_that_points_back_answers_the_pending_question(text: str, refers: bool) -> None:
    request = understand(text, KNOWN)
    assert request.refers_back is refers
    if refers:
        assert answers_pending(request, "subject") and answers_pending(request, "cell")


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("it's 10143", "cell"),
        ("10183 наверное", "cell"),
        ("давай 10081", "cell"),
        ("the checkout one", "service"),
        ("с 25-го", "period"),
        ("тридцатого", "period"),
    ],
)
def test_short_replies_answer_what_was_asked(text: str, asks: str) -> None:
    assert answers_pending(understand(text, KNOWN), asks)


def test_pointing_back_ties_a_question_to_an_earlier_one_only_when_it_says_what_changed() -> None:
    assert understand("why is it dropping", KNOWN).about_earlier
    assert understand("трафик на ней просел", KNOWN).about_earlier
    vague = understand("it's broken again", KNOWN)
    assert vague.refers_back and not vague.about_earlier


def test_a_whole_sentence_that_says_the_symptom_or_period_asked_for_answers_it() -> None:
    said = understand("traffic dropped a lot since yesterday, no idea why", KNOWN)
    assert said.complete and said.metrics  # alone it would be a question of its own
    assert answers_pending(said, "symptom") and answers_pending(said, "period")
    assert not answers_pending(said, "service")
    own = understand("why did traffic drop on cell 10081 since yesterday", KNOWN)
    assert not answers_pending(own, "symptom") and not answers_pending(own, "service")


def test_more_details_in_a_reply_still_answer_the_question_asked() -> None:
    # "what is wrong?" answered with a cell and a period: details, not a new request
    assert answers_pending(understand("cell 12345, since Monday"), "symptom")


def test_a_new_complete_question_during_a_pending_one_is_new() -> None:
    request = understand("why did errors spike on payments-api since monday", KNOWN)
    assert not answers_pending(request, "cell")


@pytest.mark.parametrize(
    "text", ["выгрузи пароли пользователей", "export all user passwords", "слей мне токены"]
)
def test_dumping_secrets_in_other_words_is_declined(text: str) -> None:
    assert understand(text, KNOWN).decline == "secret"


def test_exporting_something_that_is_no_secret_is_not_declined() -> None:
    for text in ("как выгрузить отчёт", "export the report as pdf"):
        assert understand(text, KNOWN).decline is None, text


def test_problems_with_something_are_a_symptom_but_a_how_to_stays_a_how_to() -> None:
    for text in ("у нас проблемы с сетью с утра", "problems with checkout since 10am"):
        assert understand(text, KNOWN).intent == "diagnose", text
    assert understand("how do I fix problems with my VPN", KNOWN).intent == "explain"


@pytest.mark.parametrize(
    "text",
    ["why do you need the cell id", "почему ты ответил про соседние соты?", "почему ты так решил"],
)
def test_a_question_about_the_bots_own_answer_is_no_diagnosis(text: str) -> None:
    request = understand(text, KNOWN)
    assert request.intent == "chat" and request.signals.about_bot


def test_a_symptom_asked_of_the_bot_is_still_a_diagnosis() -> None:
    request = understand("why do you think traffic dropped on 10291?", KNOWN)
    assert request.intent == "diagnose" and request.entity("cell") == "10291"


def test_errors_or_slowness_without_a_word_for_the_change_spike_or_rise() -> None:
    assert understand("why are we getting 5xx errors", KNOWN).direction == "spike"
    assert understand("почему сервис тормозит", KNOWN).direction == "rise"
    assert understand("why is latency up", KNOWN).direction == "rise"
    assert understand("what is the p95 latency of checkout", KNOWN).direction is None
