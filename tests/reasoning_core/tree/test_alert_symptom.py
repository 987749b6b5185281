"""An alert's condition as the report's symptom line (tree/symptom.py, asking/condition.py):
holding now with its value and since when, or resolved; in English and Russian; put first,
above what the runbook's gate measured."""

from __future__ import annotations

from typing import Any

import pytest

from reasoning_core.asking.condition import with_condition
from reasoning_core.models import Answer, RankedHypothesis, Synthesis
from reasoning_core.tree.symptom import alert_line, symptom_line

HOLDING: dict[str, Any] = {
    "alert": "HostOutOfDiskSpace",
    "condition": "node_filesystem_avail_bytes / node_filesystem_size_bytes < 0.1",
    "labels": {"mountpoint": "/var"},
    "value": 0.0623,
    "limit": 0.1,
    "holds": True,
    "since": "2026-12-02T14:02:05+00:00",
    "until": None,
}
RESOLVED = HOLDING | {"holds": False, "value": 0.31, "until": "2026-12-02T14:09:40+00:00"}


@pytest.mark.parametrize(
    ("reading", "language", "line"),
    [
        (
            HOLDING,
            "en",
            "HostOutOfDiskSpace: node_filesystem_avail_bytes / node_filesystem_size_bytes < 0.1"
            " on mountpoint=/var: 0.0623 now, since 2 Dec 14:02",
        ),
        (
            RESOLVED,
            "en",
            "HostOutOfDiskSpace: node_filesystem_avail_bytes / node_filesystem_size_bytes < 0.1"
            " on mountpoint=/var: resolved (it held 2 Dec 14:02 – 2 Dec 14:09); 0.31 now",
        ),
        (
            HOLDING | {"value": None},
            "en",
            "HostOutOfDiskSpace: node_filesystem_avail_bytes / node_filesystem_size_bytes < 0.1"
            " on mountpoint=/var: holds since 2 Dec 14:02",
        ),
        (
            HOLDING | {"holds": False, "since": None, "labels": {}},
            "en",
            "HostOutOfDiskSpace: node_filesystem_avail_bytes / node_filesystem_size_bytes < 0.1"
            ": resolved (it does not hold now)",
        ),
        (
            HOLDING,
            "ru",
            "HostOutOfDiskSpace: node_filesystem_avail_bytes / node_filesystem_size_bytes < 0.1"
            " на mountpoint=/var: сейчас 0.0623, с 2 дек. 14:02",
        ),
    ],
)
def test_the_alerts_condition_is_worded_as_it_was_read(
    reading: dict[str, Any], language: str, line: str
) -> None:
    assert alert_line(reading, language) == line


def test_the_alerts_line_comes_first_and_the_gates_measure_below_it() -> None:
    gate = {"label": "disk used share", "value": 0.94, "limit": 0.9, "subject": "web-1"}
    both = symptom_line(gate | {"alert": HOLDING}, "en")
    assert both is not None
    first, second = both.split("\n")
    assert first.startswith("HostOutOfDiskSpace: ") and first.endswith("since 2 Dec 14:02")
    assert second == symptom_line(gate, "en")


def _answer(symptom: dict[str, Any] | None, text: str) -> Answer:
    primary = RankedHypothesis(id="full", title="The disk is full", confidence=0.9)
    synthesis = Synthesis(primary=primary, confidence=0.9, ranking=[primary], symptom=symptom)
    return Answer(strategy="deep", text=text, confidence=0.9, synthesis=synthesis)


def test_the_report_text_and_its_synthesis_carry_the_alerts_line() -> None:
    gate = {"label": "disk used share", "value": 0.94, "limit": 0.9, "subject": "web-1"}
    old = symptom_line(gate, "en")
    answer = with_condition(_answer(gate, f"{old}\nPrimary cause: The disk is full"), RESOLVED)
    assert answer.synthesis is not None and answer.synthesis.symptom is not None
    assert answer.synthesis.symptom["alert"] == RESOLVED
    lines = answer.text.split("\n")
    assert "resolved (it held" in lines[0] and lines[1] == old
    assert lines[2] == "Primary cause: The disk is full"
    bare = with_condition(_answer(None, "Primary cause: The disk is full"), HOLDING)
    assert bare.text.split("\n")[0].endswith("0.0623 now, since 2 Dec 14:02")
