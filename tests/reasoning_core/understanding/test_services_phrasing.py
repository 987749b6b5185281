"""How people name services: a dependency beside the service asked about, slang for using
too much CPU or memory, a plea for help after a symptom, and orders to scale or drain."""

from __future__ import annotations

import pytest

from reasoning_core.strategy.heuristic import decide_heuristically
from reasoning_core.understanding import understand


@pytest.mark.parametrize(
    ("text", "subject", "dependency"),
    [
        ("у payments таймауты к auth", "payments", "auth"),
        ("checkout timeouts to payments since noon", "checkout", "payments"),
    ],
)
def test_a_service_another_one_calls_is_its_dependency_not_a_second_subject(
    text: str, subject: str, dependency: str
) -> None:
    services = [m.value for m in understand(text).mentions if m.kind == "service"]
    assert services == [subject], text
    assert dependency not in services


def test_a_service_asked_about_by_its_requests_is_the_subject() -> None:
    request = understand("why are requests to auth failing")
    assert request.entity("service") == "auth"


def test_two_services_named_alike_both_stay() -> None:
    services = {m.value for m in understand("compare payments and auth errors").mentions}
    assert {"payments", "auth"} <= services


@pytest.mark.parametrize(
    "text", ["some service keeps crashing, help", "у нас какой-то сервис жрет cpu"]
)
def test_a_symptom_without_a_name_is_a_diagnosis_of_no_service_yet(text: str) -> None:
    # (the service then asks which one: benchmarks/understanding/cases.yaml, ur15 and ur16)
    request = understand(text)
    assert request.intent == "diagnose" and request.entity("service") is None
    assert request.kinds == ["service"]


def test_help_alone_is_about_the_bot() -> None:
    assert decide_heuristically(understand("help")).strategy == "quick"


@pytest.mark.parametrize(
    "text",
    ["scale checkout to 10 replicas", "drain the node with payments", "bump the memory limit"],
)
def test_scaling_and_draining_are_changes(text: str) -> None:
    assert understand(text).decline == "change"
