"""Entity extraction with the shipped runbooks' patterns, language and keyword detection."""

from __future__ import annotations

import pytest

from reasoning_core.runbooks import load_runbooks
from reasoning_core.runbooks.entities import (
    clean_value,
    compile_pattern,
    detect_language,
    extract,
    keyword_hits,
)

RUNBOOKS = load_runbooks()


def patterns(runbook_id: str) -> list[str]:
    runbook = RUNBOOKS.get(runbook_id)
    assert runbook is not None
    return runbook.triggers.entities


def cell_of(text: str) -> str | None:
    return extract(text, [compile_pattern(p) for p in patterns("cell_traffic_drop")], "cell")


def service_of(text: str) -> str | None:
    compiled = [compile_pattern(p) for p in patterns("service_error_spike")]
    return extract(text, compiled, "service")


@pytest.mark.parametrize(
    ("question", "cell"),
    [
        ("Why did traffic drop on cell 10001?", "10001"),
        ("Why did traffic drop on Cell #A-17 since Monday?", "A-17"),
        ("check cellname=LTE_0042.", "LTE_0042"),
        ("traffic on cell 12345's sector fell", "12345"),
        ("Почему упал трафик на соте 10001?", "10001"),
        ("что с сотой «BS12_3»", "BS12_3"),
        ("по соте №777 просел трафик", "777"),
        ("cells 10001 and 10002 dropped", "10001"),
    ],
)
def test_cell_ids(question: str, cell: str) -> None:
    assert cell_of(question) == cell


@pytest.mark.parametrize(
    "question", ["Why did cell traffic drop?", "почему упал трафик на соте?", "cell is down"]
)
def test_no_cell_without_an_id(question: str) -> None:
    assert cell_of(question) is None


@pytest.mark.parametrize(
    ("question", "service"),
    [
        ("why are checkout 5xx errors up?", "checkout"),
        ("Why is the payments service slow?", "payments"),
        ("errors on service cart-api since 10:00", "cart-api"),
        ("Why are 5xx errors up on checkout?", "checkout"),
        ("checkout's latency went up", "checkout"),
        ("почему у сервиса payments выросли ошибки 5xx?", "payments"),
        ("почему растут ошибки в checkout", "checkout"),
        ("выросли задержки у orders", "orders"),
    ],
)
def test_service_names(question: str, service: str) -> None:
    assert service_of(question) == service


@pytest.mark.parametrize("question", ["why are 5xx errors up?", "почему выросли ошибки 5xx?"])
def test_stop_words_are_not_services(question: str) -> None:
    assert service_of(question) is None


def test_clean_value_trims_and_refuses_stop_words_and_long_values() -> None:
    assert clean_value(" «checkout», ") == "checkout"
    assert clean_value("the") is None
    assert clean_value("x" * 129) is None


def test_language() -> None:
    assert detect_language("Почему упал трафик на соте 10001?") == "ru"
    assert detect_language("Why did traffic drop on cell 10001?") == "en"
    assert detect_language("почему checkout 5xx errors?") == "ru"
    assert detect_language("12345") == "en"


def test_keywords_match_word_starts() -> None:
    assert keyword_hits("Трафик упала сильно", ["трафик", "упал", "сот"]) == ["трафик", "упал"]
    assert keyword_hits("undropped", ["drop"]) == []


@pytest.mark.parametrize(
    ("question", "service"),
    [
        ("why is checkout failing with 5xx?", "checkout"),
        ("payments-api is down, why?", "payments-api"),
        ("orders keeps timing out since 10:00", "orders"),
        ("why is it failing?", None),
        ("why is the site down?", None),
    ],
)
def test_service_error_spike_reads_the_service_from_common_phrasings(
    question: str, service: str | None
) -> None:
    matches = [
        m for m in load_runbooks([]).match(question) if m.runbook.id == "service_error_spike"
    ]
    found = matches[0].params.get("service") if matches else None
    assert found == service
