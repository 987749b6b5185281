"""The symptom a report opens with is the one going on now: a web service's window holds
the previous incident's latency (recovered since) beside this one's 5xx. In the live lab a
bad release right after a slow database path opened "web · p95 latency 9.36 (limit 1);
route /items" — the last fault's route, not the release's /checkout."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reasoning_core.planners.runbook.checks import PlanState
from reasoning_core.planners.runbook.symptom import symptom_data
from reasoning_core.runbooks import load_runbooks
from reasoning_core.runbooks.timewindow import resolve_window
from reasoning_core.runbooks.verdicts import threshold
from reasoning_core.understanding.dates import DateSpan

NOW = datetime(2026, 11, 28, 17, 40, tzinfo=UTC)


def _state() -> PlanState:
    return PlanState(
        runbook="http_service_trouble",
        language="en",
        params={"job": "web"},
        anchor=NOW,
        window=resolve_window(DateSpan(), now=NOW, recent_hours=0.05, end_pad=timedelta(0)),
    )


def test_the_symptom_still_beyond_its_limit_opens_the_report() -> None:
    runbook = load_runbooks().runbooks["http_service_trouble"]
    assert runbook.gate is not None
    checks = {c: runbook.check(c) for c in runbook.gate.checks}
    # both far past their limits, both at the confidence cap; only the 5xx is still there
    latency = threshold([0.2, 9.4, 9.36, 0.3, 0.2], op="above", limit=1, margin=1,
                        aggregate="max", label="p95 latency")  # fmt: skip
    errors = threshold([0.0, 0.0, 1.0, 1.0, 1.0], op="above", limit=0.05, margin=0.1,
                       aggregate="max", label="5xx share", as_share=True)  # fmt: skip
    assert latency.confidence == errors.confidence and latency.confirmed and errors.confirmed
    found = [(checks["latency_up"], latency), (checks["error_ratio_up"], errors)]
    chosen = symptom_data(runbook, _state(), found)
    assert chosen is not None and chosen["check"] == "error_ratio_up"
    assert chosen["subject"] == "web" and chosen["value"] == 1.0
    # When the latency is the one going on now, it opens the report instead.
    slow = threshold([0.2, 0.2, 1.4, 9.4, 9.36], op="above", limit=1, margin=1,
                     aggregate="max", label="p95 latency")  # fmt: skip
    gone = threshold([0.0, 1.0, 1.0, 0.0, 0.0], op="above", limit=0.05, margin=0.1,
                     aggregate="max", label="5xx share", as_share=True)  # fmt: skip
    found = [(checks["error_ratio_up"], gone), (checks["latency_up"], slow)]
    chosen = symptom_data(runbook, _state(), found)
    assert chosen is not None and chosen["check"] == "latency_up"
