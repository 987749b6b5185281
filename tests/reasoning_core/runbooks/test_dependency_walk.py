"""The dependency_walk verdict: onsets compared across services, following call edges."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from reasoning_core.runbooks.dependencies import dependency_walk_rows, find_onsets
from reasoning_core.runbooks.model import KnownValues
from reasoning_core.runbooks.rules import DependencyWalkRule

RULE = DependencyWalkRule(rule="dependency_walk")
T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
EDGES = [
    ("frontend", "checkout"),
    ("checkout", "payments"),
    ("checkout", "cart"),
    ("payments", "bank"),
]


def series(service: str, signal: str, values: list[float]) -> list[dict[str, Any]]:
    return [
        {"service": service, "signal": signal, "dt": T0 + timedelta(minutes=i), "value": v}
        for i, v in enumerate(values)
    ]


def latency_from(minute: int, ratio: float = 3.0, length: int = 30) -> list[float]:
    return [1.0 if i < minute else ratio for i in range(length)]


def rows(onsets: dict[str, int | None]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for service, minute in onsets.items():
        out += series(service, "latency", latency_from(minute if minute is not None else 99))
        out += series(service, "errors", [0.0] * 30)
    for caller, callee in EDGES:
        out += [{"service": caller, "dependency": callee, "signal": "edge", "dt": T0, "value": 1}]
    return out


def test_the_walk_follows_the_earliest_onset_to_the_root() -> None:
    data = rows({"frontend": 12, "checkout": 9, "payments": 6, "bank": 3, "cart": 10})
    evidence = dependency_walk_rows(RULE, data, {"service": "frontend"}, "en")
    assert evidence.confirmed is True
    assert evidence.data["root_service"] == "bank"
    assert evidence.data["path"] == ["frontend", "checkout", "payments", "bank"]
    assert "bank went wrong first" in evidence.text and "9 min before frontend" in evidence.text
    ru = dependency_walk_rows(RULE, data, {"service": "frontend"}, "ru")
    assert "первым начались проблемы у bank" in ru.text


def test_a_callee_that_went_wrong_after_the_caller_is_no_cause() -> None:
    data = rows({"checkout": 5, "payments": 15, "cart": None, "frontend": None, "bank": None})
    evidence = dependency_walk_rows(RULE, data, {"service": "checkout"}, "en")
    assert evidence.confirmed is False
    assert "no dependency of checkout went wrong before it" in evidence.text


def test_a_leaf_and_an_unknown_subject() -> None:
    data = rows({"bank": 3})
    assert dependency_walk_rows(RULE, data, {"service": "bank"}, "en").confirmed is False
    unknown = dependency_walk_rows(RULE, data, {"service": "ghost"}, "en")
    assert unknown.confirmed is None and "no metric of ghost" in unknown.text


def test_an_onset_needs_a_sustained_run_and_either_signal_counts() -> None:
    blip = series("a", "latency", [1.0, 3.0, 1.0, 3.0, 3.0, 1.0] + [1.0] * 10)
    assert find_onsets(RULE, blip) == {}
    errors = series("b", "errors", [0.0] * 5 + [0.05] * 10) + series("b", "latency", [1.0] * 15)
    [(service, (at, signal, value))] = find_onsets(RULE, errors).items()
    assert (service, at, signal, value) == ("b", T0 + timedelta(minutes=5), "errors", 0.05)


def test_prometheus_known_values_name_their_label_and_take_no_parameters() -> None:
    ok = KnownValues(tool="prometheus", query="group by (service) (up)", label="service")
    assert ok.label == "service"
    with pytest.raises(ValidationError, match="names its label"):
        KnownValues(tool="prometheus", query="group by (service) (up)")
    with pytest.raises(ValidationError, match="takes no parameters"):
        KnownValues(tool="prometheus", query='up{service="$service"}', label="service")
