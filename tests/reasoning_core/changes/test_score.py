"""The change score on bad input: gaps, counter resets, NaN and ±Inf, no baseline, no onset —
none gives a false "changed at" time; a clear sustained step gives its first sample."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from reasoning_core.changes.scan import reads_as_counter
from reasoning_core.changes.score import (
    MAX_SCORE,
    counter_rate,
    finite,
    rate_floor,
    score_appeared,
    score_change,
)

T0 = datetime(2026, 11, 28, 2, 0, tzinfo=UTC)
INCIDENT = T0 + timedelta(minutes=15)


def _at(i: int) -> datetime:
    return T0 + timedelta(seconds=5 * i)


def _flat_then(
    step_at: int, before: float, after: float, n: int = 204
) -> list[tuple[datetime, float]]:
    return [(_at(i), before if i < step_at else after) for i in range(n)]


def test_a_sustained_step_changes_at_its_first_sample() -> None:
    points = _flat_then(190, 0.02, 10.0)
    found = score_change(points, incident_start=INCIDENT, threshold=6)
    assert found is not None
    assert found.onset == _at(190)
    assert found.direction == "up"
    assert found.before == 0.02 and found.after == 10.0


def test_a_drop_is_down() -> None:
    found = score_change(_flat_then(185, 1.0, 0.0), incident_start=INCIDENT, threshold=6)
    assert found is not None and found.direction == "down" and found.onset == _at(185)


def test_noise_alone_does_not_change() -> None:
    points = [(_at(i), 100.0 + (i * 7919 % 13) - 6) for i in range(204)]
    assert score_change(points, incident_start=INCIDENT, threshold=6) is None


def test_a_single_spike_is_not_a_change() -> None:
    points = _flat_then(999, 1.0, 1.0)
    points[190] = (_at(190), 50.0)
    assert score_change(points, incident_start=INCIDENT, threshold=6) is None


def test_no_baseline_gives_no_onset() -> None:
    points = [(_at(i), 10.0) for i in range(178, 204)]
    assert score_change(points, incident_start=INCIDENT, threshold=6) is None


def test_a_gap_breaks_the_run() -> None:
    points = _flat_then(190, 1.0, 9.0)
    kept = [p for i, p in enumerate(points) if i < 190 or i in (190, 191) or i >= 200]
    found = score_change(kept, incident_start=INCIDENT, threshold=6)
    assert found is not None
    assert found.onset == _at(200)  # not 190: two samples, then a 40 s hole


def test_nan_and_infinities_are_dropped() -> None:
    raw: list[tuple[datetime, float | None]] = [
        (_at(i), v) for i, v in enumerate([1.0] * 180 + [math.nan, math.inf, -math.inf] * 8)
    ]
    points = finite(raw)
    assert all(math.isfinite(v) for _, v in points)
    assert score_change(points, incident_start=INCIDENT, threshold=6) is None


def test_a_counter_reset_is_not_a_rate_change() -> None:
    counts = [(_at(i), float(10 * i)) for i in range(190)]
    counts += [(_at(i), float(10 * (i - 190))) for i in range(190, 204)]  # restarted at 0
    rates = counter_rate(counts)
    assert all(v == 2.0 for _, v in rates)  # 10 per 5 s; the reset's step left out
    assert score_change(rates, incident_start=INCIDENT, threshold=6) is None


def test_a_flat_baseline_that_moves_a_little_is_capped() -> None:
    found = score_change(_flat_then(190, 0.0, 1.0), incident_start=INCIDENT, threshold=6)
    assert found is not None and found.score == 100.0


def test_already_away_before_the_window_has_no_onset() -> None:
    points = _flat_then(175, 0.0, 3.0)  # an earlier incident's lingering step
    assert score_change(points, incident_start=INCIDENT, threshold=6) is None


def test_away_before_the_window_then_back_then_away_again_changed_the_second_time() -> None:
    """An earlier fault's memory still high when the window opens, back to normal within it,
    then the leak: the leak's first sample is the onset, the earlier tail is not."""
    points = [
        (_at(i), 87.0 if 176 <= i < 184 else 263.0 if i >= 196 else 61.0) for i in range(204)
    ]
    found = score_change(points, incident_start=INCIDENT, threshold=6)
    assert found is not None and found.onset == _at(196) and found.direction == "up"
    never_back = [(_at(i), 87.0 if i >= 176 else 61.0) for i in range(204)]
    assert score_change(never_back, incident_start=INCIDENT, threshold=6) is None


def test_the_change_going_on_now_is_the_one_named() -> None:
    """An earlier fault's spike that ended, then the change still going on at the end: the
    latter's onset, and it is ongoing; the spike alone is a change that ended."""
    points = [(_at(i), 10.0 if 182 <= i < 188 or i >= 196 else 0.0) for i in range(204)]
    found = score_change(points, incident_start=INCIDENT, threshold=6)
    assert found is not None and found.onset == _at(196) and found.ongoing

    ended = [(_at(i), 10.0 if 182 <= i < 188 else 1.0) for i in range(204)]
    spike = score_change(ended, incident_start=INCIDENT, threshold=6)
    assert spike is not None and spike.onset == _at(182) and not spike.ongoing

    # on a baseline flat at zero, a burst that is over is nothing going on (a checkpoint)
    burst = [(_at(i), 10.0 if 182 <= i < 188 else 0.0) for i in range(204)]
    assert score_change(burst, incident_start=INCIDENT, threshold=6) is None


def test_a_count_moving_by_one_is_not_a_change_but_one_gone_is() -> None:
    """A gauge of whole numbers (processes running, zombies, sessions) moves by one for no
    reason: 1 -> 2 is no change, 1 -> 4 is; a count of one gone to nothing is. Read as a
    counter's rate (not a gauge), the same step is a change."""
    assert (
        score_change(_flat_then(190, 1.0, 2.0), incident_start=INCIDENT, threshold=6, gauge=True)
        is None
    )
    rose = score_change(
        _flat_then(190, 1.0, 4.0), incident_start=INCIDENT, threshold=6, gauge=True
    )
    assert rose is not None and rose.direction == "up" and rose.onset == _at(190)
    # the floor decides whether it changed, not how far: 1 -> 37 is at the cap
    many = score_change(
        _flat_then(190, 1.0, 37.0), incident_start=INCIDENT, threshold=6, gauge=True
    )
    assert many is not None and many.score == MAX_SCORE
    gone = score_change(
        _flat_then(190, 1.0, 0.0), incident_start=INCIDENT, threshold=6, gauge=True
    )
    assert gone is not None and gone.direction == "down" and gone.score == MAX_SCORE
    assert (
        score_change(_flat_then(190, 1.0, 2.0), incident_start=INCIDENT, threshold=6) is not None
    )
    # a gauge that is not a count keeps the relative floor: 0.5 -> 1.0 is a change
    assert (
        score_change(_flat_then(190, 0.5, 1.0), incident_start=INCIDENT, threshold=6, gauge=True)
        is not None
    )


def test_a_counter_born_in_the_window_appeared() -> None:
    """No sample before the window (its target scraped all along), then rising to the end:
    the first 500 of a route. One that stopped again, or stands still, did not."""
    step = timedelta(seconds=5)
    end = _at(203)
    born = [(_at(i), float(i - 190)) for i in range(190, 204)]
    found = score_appeared(born, incident_start=INCIDENT, end=end, step=step)
    assert found is not None and found.appeared and found.direction == "up"
    assert found.onset == _at(190) and found.after == 0.2  # a rate of one per 5 s
    gone = born[:5]
    assert score_appeared(gone, incident_start=INCIDENT, end=end, step=step) is None
    still = [(at, 3.0) for at, _ in born]
    assert score_appeared(still, incident_start=INCIDENT, end=end, step=step) is None
    before = [(_at(i), float(i)) for i in range(170, 204)]  # there before the window
    assert score_appeared(before, incident_start=INCIDENT, end=end, step=step) is None


def test_a_fall_to_nothing_is_as_strong_as_a_change_gets() -> None:
    """Free space from 30 MB to 1 MB is the largest fall there is, scored as such; a fall to
    half is not."""
    gone = score_change(_flat_then(190, 30e6, 1e6), incident_start=INCIDENT, threshold=6)
    half = score_change(_flat_then(190, 30e6, 15e6), incident_start=INCIDENT, threshold=6)
    assert gone is not None and gone.score == MAX_SCORE
    assert half is not None and half.score < MAX_SCORE


def test_a_counters_rate_has_its_unit_as_noise_floor() -> None:
    """One CPU tick (10 ms) more or less in a 5 s step is a counter's rounding, not a change;
    a counter whose increments share no unit keeps the relative floor."""
    # a tick every tenth step, then one every step: one unit per step more, no change
    total, ticks = 0.0, []
    for i in range(204):
        total += 0.01 if (i >= 190 or i % 10 == 0) else 0.0
        ticks.append((_at(i), total))
    assert rate_floor(ticks) == pytest.approx(0.001)
    rates = counter_rate(ticks)
    assert score_change(rates, incident_start=INCIDENT, threshold=6) is not None  # no floor
    assert (
        score_change(rates, incident_start=INCIDENT, threshold=6, floor=rate_floor(ticks)) is None
    )
    # a real rise: from one tick every other step to ten ticks a step
    busy = [(_at(i), 0.01 * (i // 2) if i < 190 else 0.95 + 0.1 * (i - 190)) for i in range(204)]
    found = score_change(
        counter_rate(busy), incident_start=INCIDENT, threshold=6, floor=rate_floor(busy)
    )
    assert found is not None and found.direction == "up"
    switches = [(_at(i), 185.0 * i + (7 if i % 3 else 0)) for i in range(204)]
    assert rate_floor(switches) < 1e-5  # 185, 192, 178…: no common unit


def test_a_series_that_wanders_in_its_recent_baseline_did_not_change_within_it() -> None:
    """Flat for two thirds of the baseline, then wandering 10-14 for its last third (a lab
    still settling, an earlier incident's slow return), its last samples back near 10: the
    window at 13.5 is within that recent wander, no change, though far from the whole
    baseline's median; a step well past the wander is one."""
    wander = [10.0, 11.0, 12.0, 13.0, 14.0]
    points = [(_at(i), 10.0 if i < 120 else wander[(i - 177) % 5]) for i in range(180)]
    assert [v for _, v in points[-3:]] == [10.0, 11.0, 12.0]  # not away before the window
    window = [(_at(i), 13.5) for i in range(180, 204)]
    assert score_change([*points, *window], incident_start=INCIDENT, threshold=6) is None
    stepped = [(_at(i), 40.0) for i in range(180, 204)]
    found = score_change([*points, *stepped], incident_start=INCIDENT, threshold=6)
    assert found is not None and found.onset == _at(180) and found.direction == "up"


def test_a_part_stalling_with_brief_recoveries_changed_from_its_first_stall() -> None:
    """Past the threshold 4 samples of 5 (stalls with one-sample recoveries): one change from
    the first stall. Every other sample past it (half the run) still is; one in three, or
    two recoveries in a row between single stalls, is not."""
    stalls = [(_at(i), 10.0 if i >= 184 and i % 5 != 0 else 1.0) for i in range(204)]
    found = score_change(stalls, incident_start=INCIDENT, threshold=6)
    assert found is not None and found.onset == _at(184) and found.ongoing

    every_other = [(_at(i), 10.0 if i >= 184 and i % 2 == 0 else 1.0) for i in range(204)]
    half = score_change(every_other, incident_start=INCIDENT, threshold=6)
    assert half is not None and half.onset == _at(184)

    sparse = [(_at(i), 10.0 if i >= 184 and i % 3 == 0 else 1.0) for i in range(204)]
    assert score_change(sparse, incident_start=INCIDENT, threshold=6) is None


def test_a_running_total_of_no_known_type_is_read_as_a_counter() -> None:
    """An exporter's "unknown" series that never falls and rises in most steps (PostgreSQL's
    active time) is a running total: its rate is scored. One that wobbles is a gauge; a type
    the metadata gives, or a `_total` name, decides by itself."""
    total = [(_at(i), 1000.0 + 3 * i) for i in range(204)]
    wobble = [(_at(i), 1000.0 + (i % 3)) for i in range(204)]
    unknown = {"pg_stat_database_active_time": "unknown"}
    assert reads_as_counter("pg_stat_database_active_time", total, unknown, INCIDENT)
    assert reads_as_counter("pg_stat_database_active_time", total, {}, INCIDENT)
    assert not reads_as_counter("pg_stat_database_active_time", wobble, unknown, INCIDENT)
    assert not reads_as_counter(
        "node_time_seconds", total, {"node_time_seconds": "gauge"}, INCIDENT
    )
    assert reads_as_counter("app_errors_total", wobble, {}, INCIDENT)
