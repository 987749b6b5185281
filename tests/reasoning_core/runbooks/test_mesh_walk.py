"""The mesh walk's bounds and its rarer endings over rows as the mesh check's query returns
them (runbooks/callgraph.py): a walk cut at its depth limit says so and is weaker; all of
a caller's calls slowing while their callees answer as before is the caller's way out; a
subject the graph does not know is no verdict; a series with an unknown measure is said."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from reasoning_core.runbooks.meshwalk import mesh_walk_rows
from reasoning_core.runbooks.rules import MeshWalkRule
from reasoning_core.runbooks.timewindow import TimeWindow

START = datetime(2026, 12, 2, 14, 0, tzinfo=UTC)
RECENT = START + timedelta(minutes=15)
END = START + timedelta(minutes=21)
WINDOW = TimeWindow(
    recent_start=RECENT, recent_end=END, baseline_start=START, baseline_end=RECENT,
    source="default", expression=None,
)  # fmt: skip


def rows(
    own: dict[str, float], calls: dict[tuple[str, str], float], *, slow_from: datetime
) -> list[dict[str, Any]]:
    """p95 of 5 ms everywhere; from `slow_from` the given workloads and calls take the given
    milliseconds."""
    out: list[dict[str, Any]] = []
    at = START
    while at <= END:
        late = at >= slow_from
        for workload in {w for pair in calls for w in pair} | set(own):
            value = own.get(workload, 5.0) if late else 5.0
            out.append({"measure": "latency", "destination_workload": workload, "dt": at,
                        "value": value})  # fmt: skip
        for (source, destination), ms in calls.items():
            labels = {"source_workload": source, "destination_workload": destination}
            out.append({"measure": "call_latency", **labels, "dt": at,
                        "value": ms if late else 5.5})  # fmt: skip
            out.append({"measure": "rate", **labels, "dt": at, "value": 2.0})
        at += timedelta(seconds=15)
    return out


def failing(answering: tuple[str, ...], *, share: float, since: datetime) -> list[dict[str, Any]]:
    """From `since`, `share` of front's calls to checkout and checkout's calls to stock
    fail, and so do the answers of the `answering` workloads (the others' stay clean)."""
    out: list[dict[str, Any]] = []
    at = START
    while at <= END:
        now = share if at >= since else 0.0
        for workload in ("front", "checkout", "stock"):
            value = now if workload in answering else 0.0
            out.append({"measure": "errors", "destination_workload": workload, "dt": at,
                        "value": value})  # fmt: skip
        for source, destination in (("front", "checkout"), ("checkout", "stock")):
            edge = {"source_workload": source, "destination_workload": destination}
            out.append({"measure": "call_errors", **edge, "dt": at, "value": now})
        at += timedelta(seconds=15)
    return out


CHAIN = {("a", "b"): 900.0, ("b", "c"): 800.0, ("c", "d"): 700.0, ("d", "e"): 600.0}


def test_a_walk_cut_at_its_depth_limit_says_so_and_is_weaker() -> None:
    found = rows({"a": 900, "b": 800, "c": 700, "d": 600, "e": 500}, CHAIN, slow_from=RECENT)
    rule = MeshWalkRule(rule="mesh_walk", max_depth=2)
    evidence = mesh_walk_rows(rule, found, WINDOW, {"destination_workload": "a"}, "en")
    assert evidence.confirmed is True
    assert evidence.data["path"] == ["a", "b", "c"]
    assert "the walk stops at its depth limit (2 hops): d changed too" in evidence.text
    assert evidence.confidence < rule.confidence
    deep = mesh_walk_rows(
        MeshWalkRule(rule="mesh_walk"), found, WINDOW, {"destination_workload": "a"}, "en"
    )
    assert deep.data["path"] == ["a", "b", "c", "d"]  # three hops: LINK_DEPTH's default


def test_all_calls_slow_while_their_callees_answer_as_before_is_the_way_out() -> None:
    found = rows({"a": 900}, {("a", "b"): 400.0, ("a", "c"): 400.0}, slow_from=RECENT)
    rule = MeshWalkRule(rule="mesh_walk")
    evidence = mesh_walk_rows(rule, found, WINDOW, {"destination_workload": "a"}, "en")
    assert evidence.confirmed is True and evidence.data["series_name"] == "a"
    assert evidence.text.startswith("a: all of a's calls changed, 14:15:00"), evidence.text
    assert "the trouble is on a's way out" in evidence.text


def test_a_subject_the_graph_does_not_know_is_no_verdict() -> None:
    found = rows({}, {("a", "b"): 5.5}, slow_from=END)
    evidence = mesh_walk_rows(
        MeshWalkRule(rule="mesh_walk"), found, WINDOW, {"destination_workload": "zz"}, "en"
    )
    assert evidence.confirmed is None
    assert evidence.text == "no mesh series of workload zz in the window"


def test_a_series_of_an_unknown_measure_is_said_and_left_out() -> None:
    found = rows({}, {("a", "b"): 5.5}, slow_from=END)
    found.append({"measure": "bytes", "destination_workload": "a", "dt": END, "value": 1.0})
    evidence = mesh_walk_rows(
        MeshWalkRule(rule="mesh_walk"), found, WINDOW, {"destination_workload": "a"}, "en"
    )
    assert evidence.confirmed is False
    assert evidence.text == (
        "nothing changed in a's own answers nor in its calls (b); "
        "ignored: series of an unknown measure bytes: 1"
    )


def test_an_earlier_incidents_tail_is_not_where_the_trouble_starts() -> None:
    """b's calls to c were slow for a minute early in the window and went back (the fault
    before this one); now b's own answers are slow and its calls are not: b's own time."""
    found = rows({"a": 900, "b": 800}, {("a", "b"): 900.0, ("b", "c"): 5.5},
                 slow_from=RECENT + timedelta(minutes=3))  # fmt: skip
    tail = (RECENT, RECENT + timedelta(minutes=1))
    for row in found:
        if row["measure"] == "call_latency" and row["source_workload"] == "b":
            row["value"] = 700.0 if tail[0] <= row["dt"] < tail[1] else 5.5
    evidence = mesh_walk_rows(
        MeshWalkRule(rule="mesh_walk"), found, WINDOW, {"destination_workload": "a"}, "en"
    )
    assert evidence.confirmed is True
    assert evidence.data["path"] == ["a", "b"], evidence.text
    assert "the time is its own" in evidence.text, evidence.text


def test_without_a_subject_the_walk_starts_where_requests_come_in() -> None:
    """A probe of the front door names no workload: the walk starts at the workload called
    from outside the mesh (Istio's `unknown` caller) and follows its calls down."""
    found = rows({"a": 900, "b": 800, "c": 700}, {("a", "b"): 900.0, ("b", "c"): 800.0,
                 ("a", "d"): 5.5}, slow_from=RECENT)  # fmt: skip
    found += [
        {"measure": "rate", "source_workload": "unknown", "destination_workload": "a",
         "dt": RECENT, "value": 3.0},
    ]  # fmt: skip
    evidence = mesh_walk_rows(MeshWalkRule(rule="mesh_walk"), found, WINDOW, {}, "en")
    assert evidence.confirmed is True, evidence.text
    assert evidence.data["path"] == ["a", "b", "c"]
    assert evidence.data["series_name"] == "c"
    assert evidence.text.startswith("a → b → c: c's own latency rose first"), evidence.text


def test_without_a_subject_or_an_outside_caller_the_uncalled_workloads_are_the_entries() -> None:
    found = rows({}, {("a", "b"): 5.5, ("x", "b"): 5.5}, slow_from=END)
    evidence = mesh_walk_rows(MeshWalkRule(rule="mesh_walk"), found, WINDOW, {}, "en")
    assert evidence.confirmed is False
    assert evidence.data["path"] == ["a"]  # a and x call b, nothing calls them: a first
    assert evidence.text == "nothing changed in a's own answers nor in its calls (b)"


def test_without_a_subject_and_without_mesh_series_there_is_no_verdict() -> None:
    evidence = mesh_walk_rows(MeshWalkRule(rule="mesh_walk"), [], WINDOW, {}, "en")
    assert evidence.confirmed is None
    assert evidence.text == "no mesh series in the window"


def test_failures_are_followed_along_the_calls_that_fail_not_one_that_only_slowed() -> None:
    """An exception in stock: front's and checkout's answers fail from 14:18; checkout's
    calls to cart got slower earlier (14:15) while cart answers as before. The walk follows
    the failing calls to stock, not the slow way into cart."""
    at = RECENT + timedelta(minutes=3)
    found = rows({}, {("front", "checkout"): 5.5, ("checkout", "cart"): 900.0,
                      ("checkout", "stock"): 5.5}, slow_from=RECENT)  # fmt: skip
    found += failing(("front", "checkout", "stock"), share=0.6, since=at)
    evidence = mesh_walk_rows(
        MeshWalkRule(rule="mesh_walk"), found, WINDOW, {"destination_workload": "front"}, "en"
    )
    assert evidence.confirmed is True, evidence.text
    assert evidence.data["path"] == ["front", "checkout", "stock"], evidence.text
    assert evidence.text.startswith("front → checkout → stock: stock's own errors rose first")


def test_a_rise_that_is_over_by_now_is_not_where_the_trouble_starts() -> None:
    """b's calls to c were slow for most of the window (the fault before this one) and are
    back to normal at its end; b itself is slow now: the time is b's own, not c's."""
    found = rows({"a": 900, "b": 800}, {("a", "b"): 900.0, ("b", "c"): 700.0}, slow_from=RECENT)
    for row in found:
        if row["measure"] == "call_latency" and row["source_workload"] == "b":
            row["value"] = 5.5 if row["dt"] >= END - timedelta(seconds=30) else row["value"]
    evidence = mesh_walk_rows(
        MeshWalkRule(rule="mesh_walk"), found, WINDOW, {"destination_workload": "a"}, "en"
    )
    assert evidence.data["path"] == ["a", "b"], evidence.text
    assert "the time is its own" in evidence.text, evidence.text


def test_a_change_that_has_just_begun_is_a_change() -> None:
    """The last sample only, far past the limit (the alert asking about it has just fired)."""
    found = rows({"a": 900}, {("a", "b"): 5.5}, slow_from=END)
    evidence = mesh_walk_rows(
        MeshWalkRule(rule="mesh_walk"), found, WINDOW, {"destination_workload": "a"}, "en"
    )
    assert evidence.confirmed is True, evidence.text
    assert evidence.data["series_name"] == "a"


def test_without_a_baseline_nothing_changed_is_not_said() -> None:
    """The mesh's series begin inside the recent window (a lab just started): unknown."""
    found = [r for r in rows({}, {("a", "b"): 5.5}, slow_from=END) if r["dt"] >= RECENT]
    evidence = mesh_walk_rows(
        MeshWalkRule(rule="mesh_walk"), found, WINDOW, {"destination_workload": "a"}, "en"
    )
    assert evidence.confirmed is None
    assert (
        evidence.text == "too little history before the window to tell whether a's answers changed"
    )


def test_a_rise_that_went_back_and_came_again_began_the_second_time() -> None:
    """a was slow for a minute early in the window (the fault before), fine for two, and is
    slow again since b slowed: b's change explains a's present one, not a consequence of a
    change that began before it."""
    again = RECENT + timedelta(minutes=3)
    found = rows({"a": 900, "b": 800}, {("a", "b"): 900.0}, slow_from=again)
    for row in found:
        early = RECENT <= row["dt"] < RECENT + timedelta(minutes=1)
        if row["measure"] == "latency" and row["destination_workload"] == "a" and early:
            row["value"] = 900.0
    evidence = mesh_walk_rows(
        MeshWalkRule(rule="mesh_walk"), found, WINDOW, {"destination_workload": "a"}, "en"
    )
    assert evidence.data["path"] == ["a", "b"], evidence.text
    assert evidence.data["series_name"] == "b"


def test_calls_failing_on_the_way_into_a_service_that_answers_as_before_are_its_connection() -> (
    None
):
    """Half the connections into stock are reset: checkout's calls to stock fail from 14:18
    while stock's own answers (its server side) do not. The primary cause names the
    connection into stock, not stock's errors."""
    at = RECENT + timedelta(minutes=3)
    found = rows({}, {("front", "checkout"): 5.5, ("checkout", "stock"): 5.5}, slow_from=RECENT)
    found += failing(("front", "checkout"), share=0.5, since=at)  # stock's own: none
    evidence = mesh_walk_rows(
        MeshWalkRule(rule="mesh_walk"), found, WINDOW, {"destination_workload": "front"}, "en"
    )
    assert evidence.confirmed is True, evidence.text
    assert evidence.data["series_name"] == "stock", evidence.text
    assert "the trouble is on the way into stock" in evidence.text
    assert evidence.data["by"] == "calls failing on their connection into workload"
