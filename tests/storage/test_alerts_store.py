"""PgAlertStore and the API key/job stores against real PostgreSQL: dedup under concurrency,
resolution, claims, the one resolved edit."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from reasoning_core.models import Answer
from reasoning_core.ports import NewAlertAnalysis, PostedMessage
from reasoning_core.ports.alerts import AlertCondition
from storage.alerts import PgAlertStore
from storage.api_keys import PgApiJobStore, PgApiKeyStore

ENDED = datetime(2024, 5, 20, 9, 45, tzinfo=UTC)


def analysis(cell: str) -> NewAlertAnalysis:
    return NewAlertAnalysis(
        dedup_key=f"cell_traffic_drop(cell={cell})", alertname="CellTrafficDrop",
        runbook="cell_traffic_drop", parameters={"cell": cell},
        question=f"Why did traffic drop on cell {cell}?", chats=[-1], report_html="🔔",
    )  # fmt: skip


@pytest.fixture
def alerts(pool: asyncpg.Pool[Any]) -> PgAlertStore:
    return PgAlertStore(pool)


async def test_a_burst_of_alerts_for_one_cell_starts_one_analysis(alerts: PgAlertStore) -> None:
    fired = await asyncio.gather(*(
        alerts.record_firing(f"fp-{i % 10}", starts_at=None, analysis=analysis("10001"))
        for i in range(40)
    ))  # fmt: skip
    outcomes = [outcome for outcome, _ in fired]
    assert outcomes.count("started") == 1
    assert outcomes.count("joined") + outcomes.count("duplicate") == 39
    assert len({analysis_id for _, analysis_id in fired}) == 1
    counts = await alerts.counts()
    assert counts == {"queued": 1, "fingerprints": 10}


async def test_what_fired_is_kept_with_the_analysis_for_its_report(
    alerts: PgAlertStore,
) -> None:
    condition = AlertCondition(
        alertname="HostOutOfDiskSpace",
        expression='node_filesystem_avail_bytes{mountpoint="/"} / node_filesystem_size_bytes < .1',
        labels={"alertname": "HostOutOfDiskSpace", "mountpoint": '/x"} or vector(1)'},
    )
    await alerts.record_firing(
        "fp", starts_at=ENDED, analysis=analysis("1").model_copy(update={"condition": condition})
    )
    claimed = await alerts.claim(stale_after_sec=30)
    assert claimed is not None and claimed.condition == condition
    await alerts.record_firing("other", starts_at=None, analysis=analysis("2"))
    second = await alerts.claim(stale_after_sec=30)
    assert second is not None and second.condition is None


async def test_the_last_resolved_alert_resolves_the_analysis_and_a_new_firing_starts_again(
    alerts: PgAlertStore,
) -> None:
    _, first = await alerts.record_firing("a", starts_at=None, analysis=analysis("1"))
    await alerts.record_firing("b", starts_at=None, analysis=analysis("1"))
    assert await alerts.record_resolved("a", ends_at=ENDED) is None
    assert await alerts.record_resolved("a", ends_at=ENDED) is None  # a repeat: nothing
    done = await alerts.record_resolved("b", ends_at=ENDED)
    assert done is not None and done.id == first and done.resolved_at == ENDED
    outcome, again = await alerts.record_firing("a", starts_at=None, analysis=analysis("1"))
    assert outcome == "started" and again != first


async def test_an_alert_long_after_a_posted_report_of_its_key_starts_a_new_analysis(
    alerts: PgAlertStore,
) -> None:
    """One resolution whytree never heard must not swallow every later incident of the key."""
    _, first = await alerts.record_firing("probe-failed", starts_at=None, analysis=analysis("1"))
    claimed = await alerts.claim(stale_after_sec=60)
    assert claimed is not None and claimed.id == first
    # a second alert of the same incident, minutes later, while the report is not posted yet
    soon = datetime.now(UTC) + timedelta(minutes=3)
    outcome, same = await alerts.record_firing(
        "probe-slow", starts_at=soon, analysis=analysis("1")
    )
    assert (outcome, same) == ("joined", first)
    answer = Answer(strategy="deep", text="report", confidence=0.9)
    await alerts.posted(first, answer=answer, report_html="<b>h</b>", messages=[])
    # just after the report: still this incident
    outcome, same = await alerts.record_firing("probe-5xx", starts_at=soon, analysis=analysis("1"))
    assert (outcome, same) == ("joined", first)
    # "probe-failed" never heard resolved; an alert of the key that began 25 min later
    later = datetime.now(UTC) + timedelta(minutes=25)
    outcome, new = await alerts.record_firing(
        "release-5xx", starts_at=later, analysis=analysis("1")
    )
    assert outcome == "started" and new != first
    assert await alerts.queued() == 1
    # the old analysis closed quietly (no "resolved" edit: its alerts were not seen resolving)
    assert not await alerts.take_resolved_edit(first)
    # its old alert resolving later touches neither analysis
    assert await alerts.record_resolved("probe-failed", ends_at=ENDED) is None


async def test_claims_posting_and_the_single_resolved_edit(alerts: PgAlertStore) -> None:
    await alerts.record_firing("a", starts_at=None, analysis=analysis("1"))
    await alerts.record_firing("b", starts_at=None, analysis=analysis("2"))
    assert await alerts.queued() == 2
    one, two = await asyncio.gather(
        alerts.claim(stale_after_sec=60), alerts.claim(stale_after_sec=60)
    )
    assert one is not None and two is not None and one.id != two.id
    assert await alerts.claim(stale_after_sec=60) is None
    answer = Answer(strategy="deep", text="report", confidence=0.9)
    posted = await alerts.posted(
        one.id, answer=answer, report_html="<b>h</b>",
        messages=[PostedMessage(chat_id=-1, message_id=5)],
    )  # fmt: skip
    assert posted.status == "posted" and posted.messages[0].message_id == 5
    assert posted.answer is not None and posted.answer.text == "report"
    assert not await alerts.take_resolved_edit(one.id)  # not resolved yet
    fingerprint = "a" if one.parameters == {"cell": "1"} else "b"
    await alerts.record_resolved(fingerprint, ends_at=ENDED)
    assert await asyncio.gather(*(alerts.take_resolved_edit(one.id) for _ in range(3))) in (
        [True, False, False], [False, True, False], [False, False, True],
    )  # fmt: skip
    await alerts.failed(two.id, "no chat took it")
    assert await alerts.queued() == 0


async def test_a_running_analysis_of_a_dead_worker_is_claimed_again(
    alerts: PgAlertStore, pool: asyncpg.Pool[Any]
) -> None:
    await alerts.record_firing("a", starts_at=None, analysis=analysis("1"))
    claimed = await alerts.claim(stale_after_sec=60)
    assert claimed is not None and await alerts.claim(stale_after_sec=60) is None
    await pool.execute("UPDATE alert_analyses SET heartbeat_at = now() - interval '5 minutes'")
    again = await alerts.claim(stale_after_sec=60)
    assert again is not None and again.id == claimed.id and again.attempts == 2


async def test_api_keys_and_jobs(pool: asyncpg.Pool[Any]) -> None:
    keys, jobs = PgApiKeyStore(pool), PgApiJobStore(pool)
    key = await keys.create(
        name="ci", key_hash="h1", user_id=7, rate_limit_per_min=5, created_by=None
    )
    assert key is not None and key.rate_limit_per_min == 5
    assert await keys.create(
        name="ci", key_hash="h2", user_id=7, rate_limit_per_min=5, created_by=None
    ) is None  # fmt: skip
    assert (await keys.by_hash("h1")) == key
    job = await jobs.create("job-1", key_id=key.id, question="why?")
    await jobs.progress("job-1", "Thinking…")
    answer = Answer(strategy="quick", text="because", confidence=0.8)
    await jobs.finish("job-1", status="done", answer=answer)
    stored = await jobs.get("job-1")
    assert stored is not None and job.status == "running"
    assert (stored.status, stored.progress, stored.answer) == ("done", "Thinking…", answer)
    assert await keys.revoke("ci") and not await keys.revoke("ci")
    assert await keys.by_hash("h1") is None
    assert [k.name for k in await keys.list()] == ["ci"]


async def test_an_analysis_that_keeps_its_condition_resolves_with_its_last_alert(
    alerts: PgAlertStore,
) -> None:
    condition = AlertCondition(alertname="BlackboxProbeFailed", expression="probe_success == 0")
    kept = analysis("1").model_copy(update={"condition": condition})
    _, first = await alerts.record_firing("p1", starts_at=ENDED, analysis=kept)
    await alerts.record_firing("p2", starts_at=ENDED, analysis=kept)
    assert await alerts.record_resolved("p1", ends_at=ENDED) is None
    done = await alerts.record_resolved("p2", ends_at=ENDED)
    assert done is not None and done.id == first and done.condition == condition


async def test_alerts_of_one_analysis_resolving_at_once_resolve_it(
    alerts: PgAlertStore, pool: asyncpg.Pool[Any]
) -> None:
    """The alert groups of one analysis resolve in the same instant (one notification per
    group, as Alertmanager sends them when a probe recovers). While the resolution of one
    is still in its transaction, the other's must wait for it, not read its alert as
    firing: else neither resolves the analysis (seen in the live bench: the next fault's
    alerts joined it and got no report)."""
    _, first = await alerts.record_firing("r1", starts_at=ENDED, analysis=analysis("9"))
    await alerts.record_firing("r2", starts_at=ENDED, analysis=analysis("9"))
    async with pool.acquire() as other:
        in_flight = other.transaction()
        await in_flight.start()  # the resolution of r1, under way
        await other.execute(
            "UPDATE alert_fingerprints SET resolved_at = $2 WHERE fingerprint = $1", "r1", ENDED
        )
        await other.execute("SELECT 1 FROM alert_analyses WHERE id = $1 FOR UPDATE", first)
        second = asyncio.create_task(alerts.record_resolved("r2", ends_at=ENDED))
        await asyncio.sleep(0.5)
        await in_flight.commit()
        done = await asyncio.wait_for(second, timeout=30)
    assert done is not None and done.id == first and done.resolved_at == ENDED
