"""What the scan names first is what changed around the symptom, not the symptom again, not
an earlier incident's tail, not a host's totals before the part that moved them.

Served by a real Prometheus from blocks promtool built of a small recording, the shape of
the lab's stalling database proxy: web's /checkout latency soars (the symptom, what the
alert reads) and its probe with it; the proxy's context switches fall a scrape before; a
route's 500s, born with the previous incident a minute before the window, stop in it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from reasoning_core.changes.scan import ChangedSeries, rank
from reasoning_core.changes.scanner import ChangeScanner
from reasoning_core.changes.score import score_change
from reasoning_core.tools.prometheus import PrometheusTool

pytestmark = pytest.mark.skipif(
    unavailable_reason() is not None, reason=unavailable_reason() or ""
)

AT = datetime(2026, 11, 27, 3, 0, tzinfo=UTC)
ONSET = AT - timedelta(seconds=60)
STALLED = ONSET - timedelta(seconds=10)
PREVIOUS = ONSET - timedelta(seconds=150 + 60)  # a minute before the window opens
WEB = 'instance="127.0.0.1:8000",job="web"'
PROCESS = 'instance="127.0.0.1:9256",job="process"'
PROBE = 'instance="http://127.0.0.1:8000/checkout",job="blackbox"'


def _times() -> Iterator[datetime]:
    t = AT - timedelta(minutes=25)
    while t <= AT:
        yield t
        t += timedelta(seconds=5)


def _counter(head: str, rate: object) -> list[str]:
    """A counter's samples, its per-second rate given by `rate(t)` (None: not yet born)."""
    lines, total = [], 0.0
    for t in _times():
        r = rate(t)  # type: ignore[operator]
        if r is None:
            continue
        total += 5 * r
        lines.append(f"{head} {total:.3f} {t.timestamp():.0f}")
    return lines


def _recording(path: Path) -> Path:
    lines = [
        "# TYPE http_request_duration_seconds_sum counter",
        *_counter(
            f'http_request_duration_seconds_sum{{{WEB},route="/checkout"}}',
            lambda t: 20.0 if t >= ONSET else 0.02 + (0.001 if t.second % 10 else 0),
        ),
        "# TYPE http_requests_total counter",
        *_counter(
            f'http_requests_total{{{WEB},route="/checkout",status="500"}}',
            lambda t: None if t < PREVIOUS else 2.2 if t < ONSET - timedelta(seconds=120) else 0,
        ),
        *_counter(
            f'http_requests_total{{{WEB},route="/checkout",status="200"}}',
            lambda t: 2.0 + (0.05 if t.second % 10 else 0),
        ),
        "# TYPE namedprocess_namegroup_context_switches_total counter",
        *_counter(
            f'namedprocess_namegroup_context_switches_total{{{PROCESS},groupname="db-proxy",'
            'ctxswitchtype="voluntary"}',
            lambda t: 15.0 if t >= STALLED else 37.0 + (0.4 if t.second % 10 else 0),
        ),
        "# TYPE probe_duration_seconds gauge",
        *(
            f"probe_duration_seconds{{{PROBE}}} {3.0 if t >= ONSET else 0.007} {t.timestamp():.0f}"
            for t in _times()
        ),
        "# TYPE up gauge",
        *(
            f"up{{{target}}} 1 {t.timestamp():.0f}"
            for target in (WEB, PROCESS, PROBE)
            for t in _times()
        ),
    ]
    path.write_text("\n".join([*lines, "# EOF", ""]), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "subject",
    [
        {"instance": "127.0.0.1:8000", "job": "web"},  # web's latency alert
        {"instance": "http://127.0.0.1:8000/checkout", "job": "blackbox"},  # the probe's
    ],
)
async def test_the_stalled_proxy_first_not_the_symptom_nor_the_last_incident(
    tmp_path: Path, subject: dict[str, str]
) -> None:
    tsdb = tmp_path / "tsdb"
    build_tsdb(_recording(tmp_path / "series.om"), tsdb)
    async with LocalPrometheus(tsdb) as server:
        scanner = ChangeScanner(PrometheusTool(server.url), clock=lambda: AT)
        result = await scanner.scan(subject, symptom_onset=ONSET)
    assert result is not None
    names = [c.component for c in result.components]
    assert names[:1] == ["db-proxy"], result.describe("en")
    changed = {(c.component, s.name) for c in result.components for s in c.series}
    # the symptom itself: web's own latency when web is the subject, the probe when it is
    own_symptom = (
        ("web /checkout", "http_request_duration_seconds_sum")
        if subject["job"] == "web"
        else ("/checkout", "probe_duration_seconds")
    )
    assert own_symptom not in changed
    # the previous incident's 500s, born a minute before the window: no baseline of their own
    assert not any(name == "http_requests_total" for _, name in changed), changed


ONSET_UNIT = datetime(2026, 11, 28, 8, 0, tzinfo=UTC)
STEP = timedelta(seconds=15)


def _changed(name: str, before: float, after: float, **labels: str) -> ChangedSeries:
    start = ONSET_UNIT - 40 * STEP
    points = [(start + i * STEP, before * (1.01 if i % 3 == 0 else 1.0)) for i in range(40)]
    points += [(ONSET_UNIT + i * STEP, after) for i in range(12)]
    change = score_change(points, incident_start=ONSET_UNIT - 2 * STEP, threshold=6.0)
    assert change is not None, name
    return ChangedSeries(labels={"__name__": name, **labels}, change=change)


def test_the_process_that_moved_the_hosts_totals_is_first() -> None:
    """A CPU hog in web's group: the host's idle CPU falls as far as web's CPU rises; web is
    what changed, the host's total only adds it up. A full disk is a part of its own."""
    idle = _changed("node_cpu_seconds_total", 0.96, 0.0, job="node", mode="idle", cpu="0")
    web_cpu = _changed("namedprocess_namegroup_cpu_seconds_total", 0.05, 0.9, groupname="web")
    assert idle.change.score == web_cpu.change.score  # as strong, both at the cap
    assert [c.component for c in rank([idle, web_cpu], symptom_onset=ONSET_UNIT)] == [
        "web",
        "node",
    ]
    disk = _changed("node_filesystem_avail_bytes", 3.3e7, 1e6, job="node", mountpoint="/data")
    assert rank([disk, idle], symptom_onset=ONSET_UNIT)[0].component == "disk"


def _ended(name: str, **labels: str) -> ChangedSeries:
    """A change at the cap that ended before the window's end (an earlier incident's tail)."""
    start = ONSET_UNIT - 40 * STEP
    points = [(start + i * STEP, 1.0 * (1.01 if i % 3 == 0 else 1.0)) for i in range(40)]
    points += [(ONSET_UNIT + i * STEP, 50.0 if i < 4 else 1.0) for i in range(12)]
    change = score_change(points, incident_start=ONSET_UNIT - 2 * STEP, threshold=6.0)
    assert change is not None and not change.ongoing, name
    return ChangedSeries(labels={"__name__": name, **labels}, change=change)


def test_of_two_parts_as_strongly_changed_the_one_changed_now_across_more_series() -> None:
    """The previous fault's tail: many of the database's series changed and ended, one is
    still up; the leaking service's memory, threads and page faults are all up now."""
    tail = [_ended(f"pg_stat_database_{n}", datname="shop") for n in ("a", "b", "c", "d")]
    still = _changed("pg_stat_database_tup_deleted", 1.0, 60.0, datname="shop")
    leak = [
        _changed(name, 2.0, 200.0, groupname="web")
        for name in ("namedprocess_namegroup_memory_bytes", "namedprocess_namegroup_num_threads")
    ]
    ranked = rank([*tail, still, *leak], symptom_onset=ONSET_UNIT)
    assert ranked[0].weight == ranked[1].weight  # both at the cap
    assert [c.component for c in ranked] == ["web", "shop"]


def _failing_route(path: Path, status: str) -> Path:
    """/checkout's 200s stop at the onset and `status` answers instead; the database's
    rollbacks rise 10 s before (every UPDATE rejected)."""
    lines = [
        "# TYPE http_requests_total counter",
        *_counter(
            f'http_requests_total{{{WEB},route="/checkout",status="200"}}',
            lambda t: 0.0 if t >= ONSET else 2.0 + (0.05 if t.second % 10 else 0),
        ),
        *_counter(
            f'http_requests_total{{{WEB},route="/checkout",status="{status}"}}',
            lambda t: None if t < ONSET else 2.0,
        ),
        "# TYPE pg_stat_database_xact_rollback counter",
        *_counter(
            f'pg_stat_database_xact_rollback{{{WEB.replace("web", "postgres")},datname="shop"}}',
            lambda t: 2.0 if t >= STALLED else 0.0,
        ),
        "# TYPE up gauge",
        *(
            f"up{{{target}}} 1 {t.timestamp():.0f}"
            for target in (WEB, PROBE, WEB.replace("web", "postgres"))
            for t in _times()
        ),
    ]
    path.write_text("\n".join([*lines, "# EOF", ""]), encoding="utf-8")
    return path


@pytest.mark.parametrize("status", ["503", "500"])
async def test_a_routes_dependency_errors_are_the_symptom_its_own_errors_are_not(
    tmp_path: Path, status: str
) -> None:
    """The probed route's 200s falling is the symptom seen from inside, and so are its 503s
    (the service passing on its database's failure): the database's rollbacks are what
    changed. A 500 is the service's own error: the subject's own failure, first before what
    merely moved."""
    tsdb = tmp_path / "tsdb"
    build_tsdb(_failing_route(tmp_path / "series.om", status), tsdb)
    async with LocalPrometheus(tsdb) as server:
        scanner = ChangeScanner(PrometheusTool(server.url), clock=lambda: AT)
        result = await scanner.scan(
            {"instance": "http://127.0.0.1:8000/checkout", "job": "blackbox"},
            symptom_onset=ONSET,
        )
    assert result is not None
    first = "web /checkout" if status == "500" else "shop"
    assert [c.component for c in result.components][:1] == [first], result.describe("en")
    statuses = {s.labels.get("status") for c in result.components for s in c.series} - {None}
    assert statuses == ({"500"} if status == "500" else set()), result.describe("en")
