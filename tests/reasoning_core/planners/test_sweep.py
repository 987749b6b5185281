"""The health sweep (issue 56): every checkup runbook's gate in turn, the first that finds
something is the part analysed; an all clear says what it read, over a real Prometheus
serving the lab's recording, and is never one while a part has no data."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from demo.services import LocalPrometheus, unavailable_reason
from reasoning_core.models import Evidence
from reasoning_core.planners.runbook.plan import NoDataError
from reasoning_core.planners.runbook.sweep import (
    ALERTS_FIRING_CONFIDENCE,
    OBSERVED_CLEAR_CONFIDENCE,
    Swept,
    all_clear,
    sweep,
)
from reasoning_core.runbooks import Check, RunbookMatch, load_runbooks, match_runbook
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.understanding import KnownNames, understand

RUNBOOKS = load_runbooks()
LAB = KnownNames(
    names={
        "host": {"127.0.0.1:9100": "127.0.0.1:9100"},
        "pg_instance": {"127.0.0.1:9187": "127.0.0.1:9187"},
        "job": {"web": "web"},
        "scrape_job": {"web": "web", "node": "node"},
    }
)


def checkups(text: str) -> list[RunbookMatch]:
    request = understand(text, LAB)
    found = [
        match_runbook(r, request, chosen=True)
        for r in RUNBOOKS.runbooks.values()
        if r.triggers.checkup
    ]
    return [m for m in found if m is not None]


def healthy(match: RunbookMatch) -> list[tuple[Check, Evidence]]:
    assert match.runbook.gate is not None
    checks = [match.runbook.check(ref) for ref in match.runbook.gate.checks]
    return [(c, Evidence(confirmed=False, confidence=0.7, text=f"{c.id} 0 vs 1")) for c in checks]


async def test_the_sweep_runs_the_gates_in_checkup_order_and_stops_at_a_finding() -> None:
    ran: list[str] = []

    async def gate(match: RunbookMatch) -> list[tuple[Check, Evidence]]:
        ran.append(match.runbook.id)
        if match.runbook.id == "host_disk":
            check = match.runbook.check(match.runbook.gate.checks[0])  # type: ignore[union-attr]
            return [(check, Evidence(confirmed=True, confidence=0.9, text="disk 97 % used"))]
        if match.runbook.id == "postgres_trouble":
            raise NoDataError("no metric pg_up for instance 127.0.0.1:9187 in the window")
        return healthy(match)

    swept = await sweep(checkups("anything on fire?"), gate)
    assert swept.found is not None and swept.found.runbook.id == "host_disk"
    orders = [RUNBOOKS.runbooks[r].triggers.checkup for r in ran]
    assert orders == sorted(orders)  # is it up, does it answer right, then its resources
    assert [m.runbook.id for m in swept.silent] == ["postgres_trouble"]
    # a runbook missing its part (several scrape jobs, no probed target listed) is not run
    assert {m.runbook.id for m in swept.unmeasured} == {"target_down", "endpoint_probe"}
    assert not {m.runbook.id for m in swept.unmeasured} & set(ran)


async def test_the_runbook_the_questions_words_fit_runs_first() -> None:
    ran: list[str] = []

    async def gate(match: RunbookMatch) -> list[tuple[Check, Evidence]]:
        ran.append(match.runbook.id)
        return healthy(match)

    swept = await sweep(checkups("is the disk ok? anything on fire?"), gate)
    assert ran[0] == "host_disk" and swept.found is None and len(swept.healthy) == len(ran)


@pytest.fixture
async def prometheus(
    lab_recording: tuple[Path, dict[str, datetime]],
) -> AsyncIterator[tuple[PrometheusTool, datetime]]:
    if (why := unavailable_reason()) is not None:
        pytest.skip(why)
    tsdb, starts = lab_recording
    async with LocalPrometheus(tsdb) as prom:
        yield PrometheusTool(prom.url), starts["nothing-wrong"] + timedelta(seconds=30)


async def test_an_all_clear_says_what_it_read_and_what_it_did_not(
    prometheus: tuple[PrometheusTool, datetime],
) -> None:
    tool, at = prometheus
    matches = {m.runbook.id: m for m in checkups("anything on fire?")}
    swept = Swept(
        healthy=[
            (matches[r], healthy(matches[r])) for r in ("endpoint_probe", "postgres_trouble")
        ],
        unmeasured=[matches["process_group"]],
    )
    clear = await all_clear(swept, {"prometheus": tool}, at=at, language="en")
    head, *lines = clear.text.splitlines()
    assert head.startswith("Nothing looks wrong right now: no alert firing, ")
    assert " targets up" in head and "2 parts checked" in head
    assert clear.confirmed is True and 0.5 <= clear.confidence <= 0.8
    assert any(line.startswith("- ") and "0 vs 1" in line for line in lines)
    assert lines[-1].startswith("Not measured here: ")
    russian = await all_clear(swept, {"prometheus": tool}, at=at, language="ru")
    assert russian.text.startswith("Сейчас ничего не выглядит неисправным")
    # a part that had no data is no all clear
    silent = Swept(healthy=swept.healthy, silent=[matches["host_disk"]])
    unsure = await all_clear(silent, {"prometheus": tool}, at=at, language="en")
    assert unsure.text.startswith("No data from ") and unsure.confirmed is None
    assert unsure.confidence == ALERTS_FIRING_CONFIDENCE


def busy_host(match: RunbookMatch) -> list[tuple[Check, Evidence]]:
    """The host's CPU gate finding the host busy; every other gate its part healthy."""
    if match.runbook.id != "host_cpu":
        return healthy(match)
    check = match.runbook.check(match.runbook.gate.checks[0])  # type: ignore[union-attr]
    return [(check, Evidence(confirmed=True, confidence=0.9, text="host CPU busy max 94 %"))]


async def test_a_busy_host_no_other_part_shows_is_an_observation_of_the_health_sweep(
    prometheus: tuple[PrometheusTool, datetime],
) -> None:
    """Asked of the whole system, a busy CPU no service's errors or latency accompany is
    said beside the all clear; asked about the CPU, or swept for a symptom, it is the
    finding; with nothing else to tell it from, it is investigated."""
    tool, at = prometheus

    async def gate(match: RunbookMatch) -> list[tuple[Check, Evidence]]:
        return busy_host(match)

    swept = await sweep(checkups("anything on fire?"), gate, observing=True)
    assert swept.found is None
    assert [m.runbook.id for m, _ in swept.observed] == ["host_cpu"]
    clear = await all_clear(swept, {"prometheus": tool}, at=at, language="en")
    assert clear.text.startswith("Nothing looks wrong right now")
    assert clear.confirmed is None  # what keeps the host busy is not established
    assert clear.confidence == OBSERVED_CLEAR_CONFIDENCE < 0.5
    assert (
        "- The host is busy: host CPU busy max 94 %; no other part's errors, latency or "
        "saturation changed" in clear.text.splitlines()
    )
    russian = await all_clear(swept, {"prometheus": tool}, at=at, language="ru")
    assert "Хост загружен: host CPU busy max 94 %" in russian.text
    named = await sweep(checkups("is the cpu ok? anything on fire?"), gate, observing=True)
    assert named.found is not None and named.found.runbook.id == "host_cpu"
    unobserved = await sweep(checkups("anything on fire?"), gate)
    assert unobserved.found is not None and unobserved.found.runbook.id == "host_cpu"
    only = [m for m in checkups("anything on fire?") if m.runbook.id == "host_cpu"]
    alone = await sweep(only, gate, observing=True)
    assert alone.found is not None and alone.found.runbook.id == "host_cpu"
