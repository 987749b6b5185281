"""The capacity rule over rows as the Prometheus tool returns them (free, size and rate parts
per mountpoint): the numbers an engineer reads, and verdicts that match them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import TypeAdapter

from reasoning_core.runbooks import TimeWindow
from reasoning_core.runbooks.capacity import capacity_line
from reasoning_core.runbooks.rules import VerdictRule
from reasoning_core.runbooks.verdicts import evaluate

START = datetime(2026, 11, 28, 2, 30, tzinfo=UTC)
WINDOW = TimeWindow(
    recent_start=START, recent_end=START + timedelta(hours=1),
    baseline_start=START - timedelta(hours=2), baseline_end=START, source="default",
)  # fmt: skip
MIB = 1024**2


def rule(**values: Any) -> VerdictRule:
    raw = {"rule": "capacity", "margin": 0.05, "by": "mountpoint",
           "name_label": {"en": "disk", "ru": "диск"}, **values}  # fmt: skip
    return TypeAdapter(VerdictRule).validate_python(raw)


def rows(free: Sequence[float], *, size: float = 32 * MIB, rate: float | None = None) -> list[Any]:
    """One sample a minute from START: the free bytes, the size and (optionally) the rate."""
    out: list[dict[str, Any]] = []
    for minute, value in enumerate(free):
        at = START + timedelta(minutes=minute)
        base = {"mountpoint": "/data", "dt": at}
        out += [{**base, "part": "free", "value": value}, {**base, "part": "size", "value": size}]
        if rate is not None:
            out.append({**base, "part": "rate", "value": rate})
    return out


def test_a_full_disk_says_since_when_and_never_a_negative_share() -> None:
    free = [20 * MIB] * 11 + [0.4 * MIB] * 10  # filled at 02:41
    evidence = evaluate(rule(test="fills", watch_below=0.25), rows(free), WINDOW)
    assert evidence.confirmed is True
    assert evidence.text == "disk /data: 410 KiB free of 32 MiB (99% used), full since 02:41 UTC"
    ru = evaluate(rule(test="low", limit=0.1), rows(free), WINDOW, language="ru")
    assert ru.confirmed is True
    assert ru.text == "диск /data: 410 КиБ свободно из 32 МиБ (занято 99%), заполнен с 02:41 UTC"


def test_a_filling_disk_says_when_it_will_be_full_at_what_rate() -> None:
    free = [900 * MIB - minute * 60 * MIB for minute in range(10)]  # 360 MiB left at 02:39
    evidence = evaluate(
        rule(test="fills", watch_below=0.25), rows(free, size=2048 * MIB, rate=MIB), WINDOW
    )
    assert evidence.confirmed is True
    assert evidence.text == (
        "disk /data: 360 MiB free of 2 GiB (82% used), full in about 6 min at 1 MiB/s"
    )
    # without a rate series the rule fits the free bytes it got: the same minute-by-minute fall
    fitted = evaluate(rule(test="fills", watch_below=0.25), rows(free, size=2048 * MIB), WINDOW)
    assert fitted.text == evidence.text


def test_a_disk_that_was_full_and_was_cleaned_says_from_when_to_when() -> None:
    free = [20 * MIB] * 5 + [0.1 * MIB] * 5 + [20 * MIB] * 5
    evidence = evaluate(rule(test="low", limit=0.1, aggregate="min"), rows(free), WINDOW)
    assert evidence.confirmed is True
    assert evidence.text.endswith("full from 02:35 to 02:40 UTC"), evidence.text


def test_a_steady_healthy_disk_is_not_filling_and_is_refuted() -> None:
    evidence = evaluate(rule(test="fills", watch_below=0.25), rows([30 * MIB] * 20), WINDOW)
    assert evidence.confirmed is False
    assert evidence.text == "disk /data: 30 MiB free of 32 MiB (6% used), not filling"
    assert capacity_line(evidence.data, "ru").endswith("не заполняется")


def test_no_size_series_is_inconclusive() -> None:
    only_free = [r for r in rows([5 * MIB] * 3) if r["part"] == "free"]
    evidence = evaluate(rule(test="low"), only_free, WINDOW)
    assert evidence.confirmed is None and "no free space and size" in evidence.text
