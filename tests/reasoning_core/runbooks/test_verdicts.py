"""Verdict rules: confirm, refute, inconclusive, strength, fair baselines, rule validation."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from reasoning_core.runbooks import baseline as bl
from reasoning_core.runbooks.baseline import Pair
from reasoning_core.runbooks.rows import prometheus_rows
from reasoning_core.runbooks.rules import VerdictRule
from reasoning_core.runbooks.timewindow import resolve_window
from reasoning_core.runbooks.verdicts import change, evaluate, rows_exist, threshold
from reasoning_core.understanding.dates import DateSpan, find_dates

RULE: TypeAdapter[Any] = TypeAdapter(VerdictRule)
START = datetime(2026, 9, 14, tzinfo=UTC)  # a Monday
DAYS = 28
END = START + timedelta(days=DAYS) - timedelta(hours=1)  # Sunday 23:00, the last sample
WINDOW = resolve_window(DateSpan(), now=END)  # the last 72 h: Friday to Sunday
ONSET = END - timedelta(hours=50)

Factor = Callable[[datetime], float]


def usual(at: datetime) -> float:
    """A daily cycle peaking in the afternoon and a 35% weekend dip."""
    daily = 0.3 + 0.7 * math.exp(-(((at.hour - 14) / 5) ** 2))
    return daily * (0.65 if at.weekday() >= 5 else 1.0)


def hours() -> list[datetime]:
    return [START + timedelta(hours=i) for i in range(DAYS * 24)]


def cell_rows(
    seed: int = 0,
    *,
    factor: Factor = lambda at: 1.0,
    availability: Factor = lambda at: 99.8,
    rtwp: Factor = lambda at: -105.0,
    noise: float = 0.05,
    scale: float = 10.0,
    missing: float = 0.0,
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for at in hours():
        level = scale * usual(at) * factor(at) * availability(at) / 100
        rows.append(
            {
                "dt": at,
                "ps_traffic": level * (1 + rng.gauss(0, noise)),
                "cs_traffic": 0.3 * level * (1 + rng.gauss(0, noise)),
                "cell_availability": availability(at),
                "rtwp": rtwp(at) + rng.gauss(0, 0.5),
            }
        )
    return [r for r in rows if rng.random() >= missing]


def since_onset(value: float) -> Factor:
    return lambda at: value if at >= ONSET else 1.0


TRAFFIC = RULE.validate_python(
    {
        "rule": "change",
        "value": ["ps_traffic", "cs_traffic"],
        "direction": "down",
        "min_change": 0.15,
        "label": "traffic",
    }
)
AVAILABILITY = RULE.validate_python(
    {
        "rule": "change",
        "value": "cell_availability",
        "scale": "absolute",
        "direction": "down",
        "min_change": 2.0,
        "unit": "%",
        "label": "availability",
        "explains": ["ps_traffic", "cs_traffic"],
    }
)


# --- change ------------------------------------------------------------------------


def test_change_confirms_a_drop_with_the_numbers() -> None:
    evidence = evaluate(TRAFFIC, cell_rows(factor=since_onset(0.5)), WINDOW)
    assert evidence.confirmed is True and evidence.confidence > 0.8
    assert evidence.has_data
    assert -0.55 < evidence.data["change"] < -0.45
    assert re.fullmatch(
        r"traffic 0\.3\d\d vs 0\.7\d\d baseline \(-[45]\d\.\d%, 51 h\)", evidence.text
    )
    assert evidence.data["onset"] == ONSET.isoformat()


def test_change_refutes_when_nothing_moved() -> None:
    evidence = evaluate(TRAFFIC, cell_rows(), WINDOW)
    assert evidence.confirmed is False and evidence.confidence > 0.5


def test_change_is_inconclusive_without_enough_samples() -> None:
    rows = [r for r in cell_rows() if r["dt"] < WINDOW.recent_start + timedelta(hours=5)]
    evidence = evaluate(TRAFFIC, rows, WINDOW)
    assert evidence.confirmed is None and evidence.confidence == 0
    assert "need 12" in evidence.text
    assert evaluate(TRAFFIC, [], WINDOW).confirmed is None


def test_availability_text_in_percentage_points() -> None:
    outage = cell_rows(availability=lambda at: 70.0 if at >= ONSET else 99.6)
    evidence = evaluate(AVAILABILITY, outage, WINDOW, tags={"detail": "availability"})
    assert evidence.confirmed is True
    assert evidence.data["detail"] == "availability" and evidence.data["rule"] == "change"
    assert evidence.text == "availability 70.0% vs 99.6% baseline (-29.6 pp, 51 h)"
    assert evidence.data["explained_share"] == pytest.approx(1.0, abs=0.15)


def test_a_small_availability_dip_explains_little_of_a_big_drop() -> None:
    both = cell_rows(
        availability=lambda at: 90.0 if at >= ONSET else 99.8, factor=since_onset(0.5)
    )
    alone = cell_rows(availability=lambda at: 90.0 if at >= ONSET else 99.8)
    weak, strong = evaluate(AVAILABILITY, both, WINDOW), evaluate(AVAILABILITY, alone, WINDOW)
    assert weak.confirmed is True and strong.confirmed is True
    assert weak.data["explained_share"] < 0.3
    assert weak.confidence < strong.confidence / 2


def test_a_weekly_cycle_with_a_weekend_dip_is_not_a_drop() -> None:
    rows = cell_rows(noise=0.03)
    weekend = resolve_window(find_dates("since Saturday"), now=END)
    assert weekend.recent_start.weekday() == 5
    fair = evaluate(TRAFFIC, rows, weekend)
    assert fair.confirmed is False
    naive = evaluate(TRAFFIC.model_copy(update={"align": "none"}), rows, weekend)
    assert naive.data["change"] < fair.data["change"] - 0.1  # what a naive average would see


def test_noisy_cells_need_a_change_beyond_their_own_variation() -> None:
    rng = random.Random(7)
    day_factor = {d: 1 + rng.gauss(0, 0.25) for d in range(DAYS + 1)}

    def noisy(drop: float) -> Factor:
        return lambda at: day_factor[(at - START).days] * (drop if at >= ONSET else 1.0)

    noisy_cell = evaluate(TRAFFIC, cell_rows(factor=noisy(0.75)), WINDOW)
    quiet_cell = evaluate(TRAFFIC, cell_rows(factor=since_onset(0.75)), WINDOW)
    assert quiet_cell.confirmed is True
    assert noisy_cell.confirmed is False and noisy_cell.data["noise"] > 0.1
    inside = change(pairs_with(0.3, 48), direction="down", min_change=0.15, noise=0.2)
    assert inside.confirmed is False and "within normal variation (±20.0%)" in inside.text
    assert change(pairs_with(0.3, 48), direction="down", min_change=0.15, noise=0.05).confirmed


def test_missing_hours_are_neither_drops_nor_dilution() -> None:
    gappy = evaluate(TRAFFIC, cell_rows(missing=0.3), WINDOW)
    assert gappy.confirmed is False
    dropped = evaluate(TRAFFIC, cell_rows(missing=0.3, factor=since_onset(0.5)), WINDOW)
    assert dropped.confirmed is True and -0.55 < dropped.data["change"] < -0.45


def test_an_onset_inside_the_window_is_found() -> None:
    late = END - timedelta(hours=20)
    rows = cell_rows(factor=lambda at: 0.3 if at >= late else 1.0)
    evidence = evaluate(TRAFFIC, rows, WINDOW)
    assert evidence.confirmed is True and evidence.data["change"] < -0.5
    no_onset = evaluate(TRAFFIC.model_copy(update={"find_onset": False}), rows, WINDOW)
    assert no_onset.data["change"] > evidence.data["change"] + 0.2


def pairs_with(drop: float, n: int) -> list[Pair]:
    return [Pair(START + timedelta(hours=i), 10 * (1 - drop), 10.0) for i in range(n)]


def signed(drop: float, n: int = 48, noise: float | None = 0.05) -> float:
    evidence = change(pairs_with(drop, n), direction="down", min_change=0.15, noise=noise)
    assert evidence.confirmed is not None
    return evidence.confidence if evidence.confirmed else -evidence.confidence


@settings(max_examples=200, deadline=None)
@given(
    st.floats(min_value=-0.5, max_value=0.99),
    st.floats(min_value=-0.5, max_value=0.99),
    st.integers(min_value=12, max_value=500),
    st.none() | st.floats(min_value=0.0, max_value=0.5),
)
def test_strength_is_monotone_in_the_change(
    a: float, b: float, n: int, noise: float | None
) -> None:
    small, large = sorted((a, b))
    assert signed(small, n, noise) <= signed(large, n, noise) + 1e-12


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=0.2, max_value=0.99), st.integers(12, 400), st.integers(1, 200))
def test_strength_grows_with_samples(drop: float, n: int, extra: int) -> None:
    assert 0 < signed(drop, n) <= signed(drop, n + extra) + 1e-12


def test_strength_grows_with_the_size_of_the_change() -> None:
    assert signed(0.2) < signed(0.3) < signed(0.5)
    assert signed(0.1) < 0 < signed(0.2)


def test_pure_weekly_cycle_gives_no_change() -> None:
    points = [(at, 5 + 4 * usual(at)) for at in hours()]
    base = bl.split(points, start=WINDOW.baseline_start, end=WINDOW.baseline_end)
    recent = bl.split(points, start=WINDOW.recent_start, end=WINDOW.recent_end)
    pairs = bl.Baseline(base).pairs(recent)
    assert len(pairs) == 72 and bl.change(pairs, "relative") == pytest.approx(0.0)


# --- threshold and rows_exist ---------------------------------------------------------


def test_threshold() -> None:
    above = threshold([0.95, 0.97, 0.99], op="above", limit=0.9, margin=0.1, label="cpu")
    assert above.confirmed is True and "cpu mean 0.970 vs limit 0.900" in above.text
    below = threshold([0.2, 0.3], op="above", limit=0.9, margin=0.1)
    assert below.confirmed is False and below.confidence > above.confidence
    assert threshold([0.2], op="below", limit=0.9, margin=0.1).confirmed is True
    assert threshold([], op="above", limit=1, margin=1).confirmed is None
    nearer = threshold([0.92], op="above", limit=0.9, margin=0.1)
    assert nearer.confidence < above.confidence


def test_threshold_reads_prometheus_rows_in_the_recent_window() -> None:
    rule = RULE.validate_python({"rule": "threshold", "op": "above", "limit": 0.9, "margin": 0.1})
    old = WINDOW.baseline_start.timestamp()
    new = (WINDOW.recent_end - timedelta(minutes=5)).timestamp()
    rows = prometheus_rows([{"metric": {"service": "a"}, "values": [[old, "2.0"], [new, "0.5"]]}])
    assert rows[0]["service"] == "a" and rows[1]["value"] == 0.5
    tool_rows = prometheus_rows([{"metric": {"service": "a"}, "ts": new, "value": 0.95}])
    assert tool_rows == [
        {"service": "a", "dt": WINDOW.recent_end - timedelta(minutes=5), "value": 0.95}
    ]
    assert evaluate(rule, rows, WINDOW).confirmed is False  # the old 2.0 is out of the window


def test_threshold_by_a_label_names_the_series_beyond_the_limit_and_when() -> None:
    rule = RULE.validate_python(
        {"rule": "threshold", "op": "above", "limit": 1, "margin": 1, "aggregate": "max",
         "label": "p95", "unit": " s", "by": "route"}
    )  # fmt: skip
    now = datetime(2026, 11, 26, 14, 10, tzinfo=UTC)
    window = resolve_window(DateSpan(), now=now, recent_hours=0.05, end_pad=timedelta(0))
    at = [now - timedelta(seconds=s) for s in (150, 120, 90, 60, 30)]

    def series(route: str, values: list[float]) -> dict[str, Any]:
        return {
            "metric": {"route": route},
            "values": [[t.timestamp(), v] for t, v in zip(at, values, strict=True)],
        }

    rows = prometheus_rows([series("/items", [0.1, 0.2, 0.1, 0.9, 0.3]),
                            series("/checkout", [0.1, 0.2, 2.5, 4.0, 3.9])])  # fmt: skip
    evidence = evaluate(rule, rows, window)
    assert evidence.confirmed is True
    assert evidence.text == (
        "p95 max 4.0 s vs limit 1.0 s (5 samples); route /checkout, from 14:08 UTC"
    )
    assert evidence.data["series_name"] == "/checkout" and evidence.data["onset"].startswith(
        "2026-11-26T14:08:30"
    )
    ru = evaluate(rule, rows, window, language="ru")
    assert ru.text.endswith("; route /checkout, с 14:08 UTC")
    calm = prometheus_rows([series("/items", [0.1, 0.2, 0.1, 0.9, 0.3])])
    refuted = evaluate(rule, calm, window)
    assert refuted.confirmed is False and refuted.text.endswith("; route /items")
    # Rows without the label are judged together, as without `by`.
    assert evaluate(rule, prometheus_rows([{"metric": {}, "values": [[at[0].timestamp(), 2]]}]),
                    window).confirmed is True  # fmt: skip


def test_a_live_window_ends_at_its_anchor_plus_the_pad() -> None:
    now = datetime(2026, 11, 26, 14, 10, tzinfo=UTC)
    window = resolve_window(DateSpan(), now=now, recent_hours=0.05, end_pad=timedelta(seconds=18))
    assert window.recent_end == now + timedelta(seconds=18)
    assert window.recent_start == window.recent_end - timedelta(minutes=3)


def test_threshold_by_label_names_the_series_in_its_own_words() -> None:
    rule = RULE.validate_python({
        "rule": "threshold", "op": "above", "limit": 0.5, "margin": 0.1, "aggregate": "max",
        "by": "groupname", "name_label": {"en": "process group", "ru": "группа процессов"},
    })  # fmt: skip
    at = [(WINDOW.recent_end - timedelta(minutes=m)).timestamp() for m in (3, 2, 1)]

    def series(group: str, *values: float) -> dict[str, Any]:
        return {"metric": {"groupname": group},
                "values": [[t, str(v)] for t, v in zip(at, values, strict=True)]}  # fmt: skip

    rows = prometheus_rows([series("db", 0.1, 0.2, 0.1), series("web", 0.3, 0.9, 0.8),
                            series("load", 0.6, 0.4, 0.2)])  # fmt: skip
    found = evaluate(rule, rows, WINDOW)
    assert found.confirmed is True and found.data["series_name"] == "web"
    assert found.text.startswith("value max 0.900") and "; process group web" in found.text
    assert "; группа процессов web" in evaluate(rule, rows, WINDOW, language="ru").text
    quiet = evaluate(rule, prometheus_rows([series("db", 0.1, 0.2, 0.1),
                                            series("web", 0.3, 0.4, 0.3)]), WINDOW)  # fmt: skip
    assert quiet.confirmed is False and quiet.data["series_name"] == "web"  # nearest the limit
    below = RULE.validate_python(
        {
            "rule": "threshold",
            "op": "below",
            "limit": 0.1,
            "margin": 0.05,
            "aggregate": "min",
            "by": "mountpoint",
        }
    )
    disks = prometheus_rows([
        {"metric": {"mountpoint": "/"}, "values": [[at[0], "0.4"]]},
        {"metric": {"mountpoint": "/data"}, "values": [[at[0], "0.02"]]},
    ])  # fmt: skip
    full = evaluate(below, disks, WINDOW)
    assert full.confirmed is True and "; mountpoint /data" in full.text
    assert evaluate(below, [], WINDOW).confirmed is None


def test_rows_exist() -> None:
    assert rows_exist(2, min_rows=1).confirmed is True
    missing = rows_exist(0, min_rows=1, refute_confidence=0.4)
    assert missing.confirmed is False and missing.confidence == 0.4
    rule = RULE.validate_python({"rule": "rows_exist", "min_rows": 2, "label": "deploys"})
    instant = prometheus_rows([{"metric": {}, "value": [END.timestamp(), "1"]}])
    evidence = evaluate(rule, instant, WINDOW)
    assert evidence.confirmed is False and evidence.text == "deploys: 1 found (need ≥ 2)"


# --- peer_compare ----------------------------------------------------------------------


def area(
    subject: Factor, neighbours: Factor, *, n: int = 3, seed: int = 0
) -> list[dict[str, Any]]:
    rows = [{**r, "series": "A", "role": "subject"} for r in cell_rows(seed, factor=subject)]
    for i in range(n):
        peer = cell_rows(seed + i + 1, factor=neighbours)
        rows += [{**r, "series": f"N{i}", "role": "peer"} for r in peer]
    return rows


def peer_rule(mode: str) -> Any:
    return RULE.validate_python(
        {
            "rule": "peer_compare",
            "mode": mode,
            "value": ["ps_traffic", "cs_traffic"],
            "label": "cell",
            "peers_label": "neighbours",
        }
    )


def test_peers_fell_too_means_area_wide_demand() -> None:
    rows = area(since_onset(0.5), since_onset(0.55))
    follows = evaluate(peer_rule("follows"), rows, WINDOW)
    assert follows.confirmed is True and follows.data["ratio"] > 0.8
    assert "neighbours -4" in follows.text and "vs cell -5" in follows.text
    offsets = evaluate(peer_rule("offsets"), rows, WINDOW)
    assert offsets.confirmed is False and offsets.confidence > 0.8


def test_peers_gained_what_the_cell_lost_means_traffic_moved() -> None:
    rows = area(since_onset(0.4), since_onset(1 + 0.6 / 3))  # 3 equal neighbours share the loss
    offsets = evaluate(peer_rule("offsets"), rows, WINDOW)
    assert offsets.confirmed is True and 0.8 < offsets.data["ratio"] < 1.2
    assert "neighbours gained" in offsets.text
    follows = evaluate(peer_rule("follows"), rows, WINDOW)
    assert follows.confirmed is False and follows.confidence > 0.8


def test_a_big_neighbours_wobble_neither_hides_nor_fakes_moved_traffic() -> None:
    lost = 0.4
    rows = [{**r, "series": "A", "role": "subject"} for r in cell_rows(0, factor=since_onset(0.6))]
    target = cell_rows(1, factor=since_onset(1 + lost))  # same size: takes all the loss
    big = cell_rows(2, factor=since_onset(0.95), scale=100.0, noise=0.02)  # a 5% dip, 10x size
    rows += [{**r, "series": "T", "role": "peer"} for r in target]
    rows += [{**r, "series": "B", "role": "peer"} for r in big]
    plain = evaluate(peer_rule("offsets").model_copy(update={"peer_z": 0.0}), rows, WINDOW)
    assert plain.confirmed is False  # the big cell's dip swamps the sum
    filtered = evaluate(peer_rule("offsets"), rows, WINDOW)
    assert filtered.confirmed is True and 0.8 < filtered.data["ratio"] < 1.2


def test_no_visible_gain_on_huge_noisy_neighbours_is_weak_evidence() -> None:
    rows = [{**r, "series": "A", "role": "subject"} for r in cell_rows(0, factor=since_onset(0.9))]
    for i in range(3):
        huge = cell_rows(i + 1, scale=500.0, noise=0.3)
        rows += [{**r, "series": f"H{i}", "role": "peer"} for r in huge]
    evidence = evaluate(peer_rule("offsets"), rows, WINDOW)
    assert evidence.confirmed is False
    assert evidence.data["visibility"] < 0.2 and evidence.confidence < 0.2


def test_peer_compare_without_a_drop_or_peers_is_inconclusive() -> None:
    flat = evaluate(peer_rule("follows"), area(lambda at: 1.0, lambda at: 1.0), WINDOW)
    assert flat.confirmed is None and "subject changed only" in flat.text
    alone = [r for r in area(since_onset(0.5), lambda at: 1.0) if r["role"] == "subject"]
    assert evaluate(peer_rule("offsets"), alone, WINDOW).confirmed is None


# --- declared rules are validated -------------------------------------------------------


@pytest.mark.parametrize(
    "declaration",
    [
        {"rule": "vibes"},
        {"rule": "change", "value": "x", "direction": "down"},  # no min_change
        {"rule": "change", "value": "x", "direction": "down", "min_change": 0},
        {
            "rule": "change",
            "value": ["a", "b"],
            "direction": "down",
            "min_change": 1,
            "scale": "absolute",
        },
        {"rule": "change", "value": "x", "direction": "down", "min_change": 1, "code": "1/0"},
        {"rule": "threshold", "op": "above", "limit": 1},  # no margin
        {"rule": "peer_compare", "value": "x", "mode": "mirror"},
        {
            "rule": "peer_compare",
            "value": "x",
            "mode": "offsets",
            "min_ratio": 0.5,
            "full_ratio": 0.5,
        },
    ],
)
def test_invalid_rule_declarations(declaration: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RULE.validate_python(declaration)


def test_threshold_by_a_label_names_the_series_still_beyond_the_limit_first() -> None:
    """The window holds an earlier incident's tail: /items' p95 was 9 s two minutes ago and
    is 0.2 s now, /checkout's is 1.5 s now. The one going on now is named; the aggregate
    stays the max over the window (the verdict does not change)."""
    rule = RULE.validate_python(
        {"rule": "threshold", "op": "above", "limit": 1, "margin": 1, "aggregate": "max",
         "label": "p95", "unit": " s", "by": "route"}
    )  # fmt: skip
    now = datetime(2026, 11, 26, 14, 10, tzinfo=UTC)
    window = resolve_window(DateSpan(), now=now, recent_hours=0.05, end_pad=timedelta(0))
    at = [now - timedelta(seconds=s) for s in (150, 120, 90, 60, 30)]

    def series(route: str, values: list[float]) -> dict[str, Any]:
        return {
            "metric": {"route": route},
            "values": [[t.timestamp(), v] for t, v in zip(at, values, strict=True)],
        }

    rows = prometheus_rows([series("/items", [9.0, 9.4, 0.3, 0.2, 0.2]),
                            series("/checkout", [0.1, 0.1, 1.4, 1.5, 1.5])])  # fmt: skip
    evidence = evaluate(rule, rows, window)
    assert evidence.confirmed is True
    assert evidence.data["series_name"] == "/checkout" and evidence.data["last"] == 1.5
    # Nothing beyond the limit now: the strongest of the window is named, as before.
    over = prometheus_rows([series("/items", [9.0, 9.4, 0.3, 0.2, 0.2]),
                            series("/checkout", [0.1, 0.1, 1.4, 0.5, 0.5])])  # fmt: skip
    assert evaluate(rule, over, window).data["series_name"] == "/items"
