"""A part that stopped outranks the parts that moved because it stopped: the web service
killed, its scrape `up` falls to 0, and PostgreSQL's transactions fall with it — a change as
strong and as early, but an effect."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from reasoning_core.changes.scan import ChangedSeries, rank, stopped
from reasoning_core.changes.score import score_change

ONSET = datetime(2026, 11, 28, 8, 0, tzinfo=UTC)
STEP = timedelta(seconds=15)


def series(before: float, after: float, *, moved_at: int = 0) -> list[tuple[datetime, float]]:
    """40 samples of `before` (with a little noise), then `after` from `moved_at` samples
    past the onset."""
    start = ONSET - 40 * STEP
    points = [(start + i * STEP, before + (0.01 * before if i % 3 == 0 else 0)) for i in range(40)]
    points += [(ONSET + i * STEP, before if i < moved_at else after) for i in range(12)]
    return points


def changed(name: str, points: list[tuple[datetime, float]], **labels: str) -> ChangedSeries:
    change = score_change(points, incident_start=ONSET - 2 * STEP, threshold=6.0)
    assert change is not None, name
    return ChangedSeries(labels={"__name__": name, **labels}, change=change)


def test_the_service_that_stopped_is_first_not_the_database_it_fed() -> None:
    web_up = changed("up", series(1.0, 0.0, moved_at=1), job="web", instance="127.0.0.1:1")
    commits = changed(
        "pg_stat_database_xact_commit", series(40.0, 0.5), job="postgres", datname="postgres"
    )
    assert commits.change.onset < web_up.change.onset  # the database moved a scrape earlier
    assert stopped(web_up) and not stopped(commits)

    ranked = rank([commits, web_up], symptom_onset=ONSET)
    assert [c.component for c in ranked] == ["web", "postgres"]


def test_a_group_with_no_process_left_stopped_one_with_fewer_did_not() -> None:
    empty = changed("namedprocess_namegroup_num_procs", series(3.0, 0.0), groupname="db-proxy")
    fewer = changed("namedprocess_namegroup_num_procs", series(12.0, 4.0), groupname="postgres")
    assert stopped(empty) and not stopped(fewer)
    assert [c.component for c in rank([fewer, empty], symptom_onset=ONSET)] == [
        "db-proxy",
        "postgres",
    ]


def test_a_rise_of_up_is_no_stop() -> None:
    back = changed("up", series(0.0, 1.0), job="web")
    assert not stopped(back)


def test_a_change_still_going_on_outranks_one_that_ended() -> None:
    """The previous incident's change in the window, over before the symptom, weighs half of
    the one going on now, however strong."""
    ended = changed("namedprocess_namegroup_cpu_seconds_total", series(1.0, 50.0), groupname="web")
    now = changed("node_filesystem_avail_bytes", series(30.0, 1.0, moved_at=2), job="node")
    ended = ChangedSeries(labels=ended.labels, change=replace(ended.change, ongoing=False))
    assert ended.change.score >= now.change.score
    assert [c.component for c in rank([ended, now], symptom_onset=ONSET)] == ["disk", "web"]
