"""Questions as on-call chats type them (issue 56): pasted error codes, log lines and alert
names read as symptoms, letters held down and words typed one edit off, slang, health
questions, and the system as the subject when a question names no part."""

from __future__ import annotations

import pytest

from reasoning_core.runbooks import load_runbooks
from reasoning_core.strategy.heuristic import decide_heuristically
from reasoning_core.understanding import KnownNames, Request, understand
from reasoning_core.understanding.symptoms import gloss, split_alert_names
from reasoning_core.understanding.typos import correct_typos

#: The names a lab like whytree's own has: one host, one PostgreSQL, one HTTP job, several
#: scrape jobs and process groups.
LAB = KnownNames(
    names={
        "scrape_job": {n: n for n in ("web", "postgres", "node", "blackbox", "db-proxy")},
        "job": {"web": "web"},
        "route": {"/checkout": "/checkout", "checkout": "/checkout"},
        "host": {"127.0.0.1:9100": "127.0.0.1:9100", "127.0.0.1": "127.0.0.1:9100"},
        "pg_instance": {"127.0.0.1:9187": "127.0.0.1:9187"},
        "process_group": {n: n for n in ("web", "postgres", "db-proxy", "load")},
    }
)
RUNBOOKS = load_runbooks()


def parts(request: Request) -> list[tuple[str, str]]:
    return [(m.kind, m.value) for m in request.mentions if m.kind != "name"]


def best(text: str) -> str:
    return RUNBOOKS.match(understand(text, LAB))[0].runbook.id


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("why is evrything so sloooow on web", "why is everything so slow on web"),
        ("web is dowwn", "web is down"),
        ("postgress refuses connections", "postgres refuses connections"),
        ("memmory keeps growing", "memory keeps growing"),
        ("база тормазит", "база тормозит"),
    ],
)
def test_held_letters_and_one_edit_typos_of_on_call_words_are_read_as_the_word(
    typed: str, read: str
) -> None:
    assert correct_typos(typed) == read


@pytest.mark.parametrize(
    "text", ["the dashboards looks empty", "the clients lock the rows", "slot taken"]
)
def test_real_words_near_on_call_words_stay_as_typed(text: str) -> None:
    assert correct_typos(text) == text


def test_alert_names_are_split_into_their_words_unless_the_data_has_the_name() -> None:
    assert split_alert_names("HostOomKillDetected firing") == "Host Oom Kill Detected firing"
    assert split_alert_names("OOMKilled again") == "OOM Killed again"
    assert split_alert_names("MyShop is slow", keep=lambda n: n == "MyShop") == "MyShop is slow"
    assert split_alert_names("web is down, ok?") == "web is down, ok?"


def test_pasted_codes_are_glossed_with_what_they_mean() -> None:
    assert "no space left on disk" in gloss("enospc on write")
    assert "too many connections" in gloss("fatal: sorry, too many clients already")
    assert "oom killed" in gloss("pod was oomkilled")
    assert "target down, not answering" in gloss("econnrefused 127.0.0.1:8080")
    assert "5xx errors" in gloss("чекаут отдаёт пятисотки")


@pytest.mark.parametrize(
    ("text", "runbook"),
    [
        ("ENOSPC errors on the host, where?", "host_disk"),
        ("df says 100% somewhere, what's full?", "host_disk"),
        ("psql: error: FATAL: sorry, too many clients already", "postgres_trouble"),
        ("PostgresqlTooManyConnections firing", "postgres_trouble"),
        ("HostOutOfDiskSpace, what now", "host_disk"),
        ("what is eating RAM on the host", "host_memory"),
        ("сервер в полке, кто жрёт?", "host_cpu"),
        ("checkouts time out, is something holding a lock in pg?", "postgres_trouble"),
        # shorthand and slang for the resource: "mem", "оперативка", "conns"
        ("free mem dropping fast on the host, which proc", "host_memory"),
        ("оперативка заканчивается, что жрёт?", "host_memory"),
        ("db wont take new conns, who holds them all", "postgres_trouble"),
        # the target's own symptom outranks the asker's guess at its cause
        ("web's not answering, crashed?", "target_down"),
        # a status code with a release: the runbook whose hypotheses include the release
        ("после релиза сыпятся 500, откатывать?", "http_service_trouble"),
        # an alert name ending in an acronym
        ("NodeHighCPU what process", "host_cpu"),
        # a version named for its release, a deploy said in its case form
        ("checkout broken since v2 went out", "http_service_trouble"),
        ("после деплоя ошибки на чекауте, релиз виноват?", "http_service_trouble"),
        # the status in Russian slang; a refused connection with no database word in it
        ("чекаут отдаёт пятисотки после релиза, почему?", "http_service_trouble"),
        ("connection refused on :8080", "target_down"),
        # what a stalled part waits on, without "why"
        ("transactions take seconds to commit, what's pg waiting on", "postgres_trouble"),
    ],
)
def test_a_symptom_in_any_form_fits_the_runbook_that_measures_it(text: str, runbook: str) -> None:
    assert best(text) == runbook


def test_an_error_code_is_never_a_name() -> None:
    request = understand("ENOSPC errors on the host, where?", LAB)
    assert not [m for m in request.mentions if m.kind != "name"], request.mentions
    assert request.system


def test_a_word_near_no_known_name_is_no_name_but_a_near_miss_is_asked_back() -> None:
    request = understand("why is the zorblax slow?", LAB)
    assert all(m.value != "zorblax" or m.kind == "name" for m in request.mentions)
    webb = understand("why is webb down?", LAB)
    unknown = webb.unknown()
    assert unknown and "web" in unknown[0].suggestions


@pytest.mark.parametrize(
    "text",
    [
        "anything on fire?",
        "all good with the shop right now?",
        "is anything wrong?",
        "как там прод?",
        "есть сейчас проблемы в проде?",
        "есть что-нибудь горящее?",
        "r we good?",
        "any alerts firing right now",
        # the other word order, other adjectives, "всё живое"
        "проблемы есть сейчас?",
        "anything weird going on rn?",
        "у нас всё живое?",
    ],
)
def test_a_health_question_without_a_subject_is_a_checkup_of_the_whole_system(
    text: str,
) -> None:
    request = understand(text, LAB)
    assert request.intent == "diagnose" and request.checkup and request.system, request
    decision = decide_heuristically(request)
    assert decision.strategy == "deep" and not decision.questions
    # every checkup runbook whose part the lab has one of fits: the sweep runs them all
    fitting = {m.runbook.id for m in RUNBOOKS.match(request) if m.runbook.triggers.checkup}
    assert {"host_cpu", "host_disk", "host_memory", "postgres_trouble"} <= fitting


@pytest.mark.parametrize(
    "text",
    [
        "is it cpu?",
        "почему всё тупит, проц в потолок",
        "p99 on checkout is 2s+, whats up",
        "is it the new release?",
        "disk at 100%",
        "PostgresqlLongRunningTransaction what is it blocking",
        "is something blocking the stock table",
        "serverr is crawling, cpu at 100, who",
        # a noun after "lock" is no order to lock anything
        "lock contention on stock table?",
        # slang for slow: "тупит", "долгие"
        "чекаут тупит, что с базой?",
        "запросы к базе долгие, сеть или сама база?",
        # who or what does it, with the resource named
        "кто грузит процессор?",
        "who is blocking the stock update",
        "RAM usage climbing non stop on the host",
    ],
)
def test_a_question_naming_what_breaks_is_investigated_without_a_verb_of_trouble(
    text: str,
) -> None:
    """Without a model such a message can only be investigated: never "no language model"."""
    request = understand(text, LAB)
    assert request.intent == "diagnose", request
    assert decide_heuristically(request).strategy == "deep"


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("what is cpu steal?", "explain"),
        ("thanks, that helped", "chat"),
        ("how do I steal a password", "act"),
    ],
)
def test_definitions_thanks_and_real_attacks_stay_what_they_are(text: str, intent: str) -> None:
    assert understand(text, LAB).intent == intent


def test_a_question_naming_a_part_is_not_about_the_whole_system() -> None:
    assert not understand("is postgres ok?", LAB).system
    assert not understand("why is web slow?", LAB).system


def test_without_the_datas_names_a_question_naming_nothing_is_still_asked_about() -> None:
    request = understand("anything on fire?")
    assert request.system and not request.sole
    assert decide_heuristically(request).strategy == "clarify"


@pytest.mark.parametrize(
    "text",
    ["??", "🔥🔥🔥", "x" * 4000, 'Traceback (most recent call last):\n  File "a.py", line 1'],
)
def test_bad_input_is_read_without_an_error_and_names_nothing_made_up(text: str) -> None:
    request = understand(text, LAB)
    assert all(
        m.known is not True or m.value in LAB.names.get(m.kind, {}).values()
        for m in request.mentions
    )
    decision = decide_heuristically(request)
    assert decision.strategy in ("quick", "clarify", "deep")


#: The same question in English and Russian (as the holdouts pair them).
PAIRS = [
    ("the disk on the host is full, why?", "диск на хосте забит, почему?"),
    ("postgres refuses connections, why?", "postgres не пускает подключения, почему?"),
    ("is web leaking memory?", "у web течёт память?"),
    ("why is web so slow?", "почему web так тормозит?"),
    ("web is down, what happened?", "web лежит, что случилось?"),
    ("who is eating the cpu on the box?", "кто жрёт процессор на сервере?"),
    ("anything on fire?", "есть сейчас проблемы?"),
    ("is something holding a lock in the database?", "кто-то держит блокировку в базе?"),
    ("anything suspicious in the system?", "есть что-то подозрительное в системе?"),
]


@pytest.mark.parametrize(("en", "ru"), PAIRS)
def test_one_question_in_two_languages_is_one_request_and_one_runbook(en: str, ru: str) -> None:
    english, russian = understand(en, LAB), understand(ru, LAB)
    assert (english.language, russian.language) == ("en", "ru")
    for field in ("intent", "resources", "system", "checkup"):
        assert getattr(english, field) == getattr(russian, field), field
    assert parts(english) == parts(russian)
    assert best(en) == best(ru)


def test_an_http_statuss_own_words_name_no_part() -> None:
    """ "Internal Server Error" is a 500, not the host; the route it was pasted with is the
    subject."""
    request = understand("HTTP 500 Internal Server Error on /checkout, why", LAB)
    assert "host" not in request.kinds and "errors" in request.metrics
    assert ("route", "/checkout") in parts(request)
    assert best("HTTP 500 Internal Server Error on /checkout, why") == "http_service_trouble"
    assert "host" in understand("the server is slow, why?", LAB).kinds


@pytest.mark.parametrize(
    "text",
    [
        "curl: (7) Failed to connect to 127.0.0.1 port 8080: Connection refused",
        "connect to 127.0.0.1:8080 failed: connection refused",
    ],
)
def test_an_address_with_a_port_names_what_listens_there_not_its_host(text: str) -> None:
    """The lab's web service is not on 8080: the address and port name nothing the data
    has, so no part of the host is taken for it, and the port is no id."""
    request = understand(text, LAB)
    assert parts(request) == [], request.mentions
    assert "availability" in request.metrics
    assert not best(text).startswith("host")


@pytest.mark.parametrize("text", ["connection refused on :8080", "nothing answers on port 8080"])
def test_a_port_said_alone_is_no_id_when_nothing_listens_there(text: str) -> None:
    request = understand(text, LAB)
    assert parts(request) == [], request.mentions


def test_a_port_said_alone_is_what_listens_there() -> None:
    assert parts(understand("connection refused on :9187", LAB)) == [
        ("pg_instance", "127.0.0.1:9187")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "transactions take seconds to commit, what's pg waiting on",
        "чего ждёт постгрес, коммиты по несколько секунд",
    ],
)
def test_what_a_stalled_part_waits_on_is_a_question_of_cause(text: str) -> None:
    request = understand(text, LAB)
    assert request.intent == "diagnose"
    assert decide_heuristically(request).strategy == "deep"


def test_an_address_with_a_known_port_is_that_target() -> None:
    request = understand("127.0.0.1:9100 is not answering", LAB)
    assert parts(request) == [("host", "127.0.0.1:9100")]
    assert ("host", "127.0.0.1:9100") in parts(understand("is 127.0.0.1 overloaded?", LAB))


@pytest.mark.parametrize(
    ("text", "errors"),
    [
        ("did the latest deploy break checkout?", True),
        ("v2 сломал чекаут?", True),
        ("it's broken again", False),
        ("it broke again", False),
    ],
)
def test_a_release_that_broke_a_part_is_about_its_errors(text: str, errors: bool) -> None:
    assert ("errors" in understand(text, LAB).metrics) is errors


@pytest.mark.parametrize(
    "text", ["why did pg get slow at 1430?", "connection refused on :8080 from pg"]
)
def test_a_number_that_is_none_of_the_listed_names_is_no_part(text: str) -> None:
    """Where the data lists its PostgreSQL instances, a number is none of them: the one the
    lab has is taken, never an instance "1430"."""
    match = RUNBOOKS.match(understand(text, LAB))[0]
    assert match.runbook.id == "postgres_trouble"
    assert match.params == {"instance": "127.0.0.1:9187"}
