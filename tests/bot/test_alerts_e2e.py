"""Alertmanager's notifications reach the running bot as production sends them: alerts
pushed to a real Alertmanager (tests/bot/alertmanager_front.py), grouped, repeated and
resolved by it, posted to whytree's webhook with its ``http_config`` credentials. One
analysis per alert group, the report in the fake Telegram chat, the resolved edit; and
what is refused (hand-made bad calls: malformed, unauthorised, too large)."""

from __future__ import annotations

import html
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from benchmarks.harness.polling_bot import RunningBot, harness_settings, running_bot
from bot.alerts.alertmanager_runner import Timing
from bot.alerts.mapping import DEFAULT_MAPPING
from bot.config import Settings
from demo.dataset import ExampleQuestion
from fake_servers.alertmanager import alert, notification
from fake_servers.telegram.server import FakeTelegramServer, RecordedCall
from tests.bot.alertmanager_front import (
    AlertmanagerFront,
    firing,
    minute_ago,
    resolved,
)
from tests.language import foreign_words

pytestmark = pytest.mark.slow

TOKEN = "alert-token-for-tests"
RADIO, DEFAULT = -100123, -100456


@pytest.fixture
def drop_cells(demo_examples: list[ExampleQuestion]) -> list[str]:
    """The demo dataset loaded; cells with a technical traffic drop."""
    return [e.cellname for e in demo_examples if e.kind == "technical"]


def _settings(
    database_url: str, telegram: FakeTelegramServer, front: AlertmanagerFront, **extra: Any
) -> Settings:
    values: dict[str, Any] = {"alert_chats": f"team=radio:{RADIO},default:{DEFAULT}"}
    values |= front.bot_settings | extra
    return harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=None, **values
    )


def _drop(cell: str, **extra: str) -> dict[str, str]:
    return {"alertname": "CellTrafficDrop", "cell": cell, "severity": "page", **extra}


def _texts(telegram: FakeTelegramServer, chat: int) -> list[str]:
    return [m.text for m in telegram.sent_messages(chat)]


def _headers(telegram: FakeTelegramServer, chat: int, name: str) -> list[RecordedCall]:
    return [m for m in telegram.sent_messages(chat) if m.text.startswith(f"🔔 <b>{name}</b>")]


async def _fetch(database_url: str, sql: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(database_url)
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


async def _counts(database_url: str) -> dict[str, int]:
    rows = await _fetch(
        database_url,
        "SELECT coalesce(runbook, 'none') AS r, count(*) AS n FROM alert_analyses GROUP BY 1",
    )
    return {r["r"]: r["n"] for r in rows}


async def _repeated(front: AlertmanagerFront, database_url: str, alerts: int) -> None:
    """Wait until Alertmanager has notified every one of the `alerts` again (its
    repeat_interval) since now: the receiver saw each fingerprint once more."""
    [since] = await _fetch(database_url, "SELECT now() AS t")

    async def again() -> bool:
        rows = await _fetch(
            database_url, "SELECT last_seen_at FROM alert_fingerprints ORDER BY fingerprint"
        )
        return len(rows) == alerts and all(r["last_seen_at"] > since["t"] for r in rows)

    await front.wait_until(f"a repeat of all {alerts} alerts", again)


async def _resolved_alerts(database_url: str) -> int:
    rows = await _fetch(
        database_url, "SELECT count(*) AS n FROM alert_fingerprints WHERE resolved_at IS NOT NULL"
    )
    return int(rows[0]["n"])


async def test_alert_groups_are_investigated_once_repeated_and_resolved(
    alertmanager: AlertmanagerFront,
    telegram: FakeTelegramServer,
    drop_cells: list[str],
    database_url: str,
) -> None:
    cell_a, cell_b = drop_cells[0], drop_cells[1]
    probe_1, probe_2 = _drop(cell_a, instance="probe-1"), _drop(cell_a, instance="probe-2")
    settings = _settings(database_url, telegram, alertmanager)
    async with running_bot(settings, telegram):
        # Two groups (group_by alertname, cell): cell A's two alerts share one analysis.
        await alertmanager.push(
            firing(probe_1), firing(probe_2), firing(_drop(cell_b, team="radio"))
        )
        await telegram.wait_for(
            lambda: (
                bool(_headers(telegram, DEFAULT, "CellTrafficDrop"))
                and bool(_headers(telegram, RADIO, "CellTrafficDrop"))
                and len(telegram.sent_messages(DEFAULT)) >= 2
                and len(telegram.sent_messages(RADIO)) >= 2
            ),
            timeout=60,
        )
        # Alertmanager repeats both groups: nothing new starts, nothing is posted again.
        await _repeated(alertmanager, database_url, alerts=3)
        assert await _counts(database_url) == {"cell_traffic_drop": 2}
        [header_a] = _headers(telegram, DEFAULT, "CellTrafficDrop")
        [header_b] = _headers(telegram, RADIO, "CellTrafficDrop")
        assert f"cell={cell_a}" in header_a.text and "cell_traffic_drop" in header_a.text
        assert f"cell={cell_b}" in header_b.text
        report_a = "\n".join(_texts(telegram, DEFAULT)[1:])
        assert "Primary cause:</b> Technical problem" in report_a, report_a
        # the footer names the runbook by its own title (issue 41), not "planner: runbook"
        assert "checked by the runbook «Traffic drop on a cell»" in report_a, report_a

        # One of the two alerts of cell A resolves: the report stays as it is ...
        await alertmanager.push(resolved(probe_1, at=minute_ago() - timedelta(minutes=5)))

        async def first_resolved() -> bool:
            return await _resolved_alerts(database_url) == 1

        await alertmanager.wait_until("probe-1's resolution delivered", first_resolved)
        assert telegram.edits(DEFAULT) == []
        # ... the second one resolves too: the posted report says so.
        ended = minute_ago()
        await alertmanager.push(resolved(probe_2, at=ended))
        await telegram.wait_for(lambda: bool(telegram.edits(DEFAULT)), timeout=60)
        [edit] = telegram.edits(DEFAULT, header_a.result["message_id"])
        assert edit.text.startswith(f"✅ Resolved at {ended:%Y-%m-%d %H:%M} UTC"), edit.text
        assert f"cell={cell_a}" in edit.text
        assert telegram.edits(RADIO) == []  # cell B still fires
        assert await _resolved_alerts(database_url) == 2


#: A rule over a metric no runbook reads.
DISK_FULL = 'disk_used_ratio{host="db-1"} > 0.9'


async def test_unmapped_and_injected_alerts_are_noted_once_never_run(
    alertmanager: AlertmanagerFront,
    telegram: FakeTelegramServer,
    database_url: str,
    demo_examples: list[ExampleQuestion],
) -> None:
    injected = "1'; DROP TABLE demo.cells; --"
    settings = _settings(database_url, telegram, alertmanager)
    async with running_bot(settings, telegram):
        await alertmanager.push(
            firing({"alertname": "DiskFull", "host": "db-1"}, expr=DISK_FULL),
            firing(_drop(injected)),
        )
        await telegram.wait_for(lambda: len(telegram.sent_messages(DEFAULT)) >= 2, timeout=60)
        await _repeated(alertmanager, database_url, alerts=2)  # repeats note nothing new
    texts = _texts(telegram, DEFAULT)
    assert sum("No runbook for alert DiskFull" in t for t in texts) == 1
    assert sum(DISK_FULL in html.unescape(t) for t in texts) == 1  # its expression named
    assert sum("label cell is not a plain name" in t for t in texts) == 1
    assert len(texts) == 2
    assert await _counts(database_url) == {"none": 2}  # two notes, no analysis
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("SELECT count(*) FROM demo.cells") > 0
    finally:
        await conn.close()


@pytest.fixture
async def bot(database_url: str, telegram: FakeTelegramServer) -> AsyncIterator[RunningBot]:
    """A bot whose webhook hand-made bad calls are sent to (no Alertmanager sends those)."""
    settings = harness_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=None,
        api_listen="127.0.0.1:0",
        alert_chats=f"team=radio:{RADIO},default:{DEFAULT}",
        alert_webhook_token=TOKEN,
        alert_max_bytes=64 * 1024,
    )
    async with running_bot(settings, telegram) as running:
        yield running


@pytest.mark.parametrize(
    "case",
    [
        ({}, None, 401, "unauthorized"),
        ({"Authorization": "Bearer wrong"}, None, 401, "unauthorized"),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, None, 401, "unauthorized"),
        ({"Authorization": f"Bearer {TOKEN}"}, b"{not json", 400, "version 4"),
        ({"Authorization": f"Bearer {TOKEN}"}, b'{"version": "3"}', 400, "version"),
        ({"Authorization": f"Bearer {TOKEN}"}, b"x" * (64 * 1024 + 10), 400, "larger than"),
    ],
)
async def test_bad_calls_are_refused_and_store_nothing(
    bot: RunningBot, database_url: str, case: tuple[dict[str, str], bytes | None, int, str]
) -> None:
    headers, body, status, reason = case
    assert bot.api is not None
    payload = body or json.dumps(notification([alert(_drop("10001"))])).encode()
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{bot.api.url}/alerts/alertmanager", data=payload, headers=headers) as resp,
    ):
        assert resp.status == status
        assert reason in (await resp.json())["error"]
    assert await _counts(database_url) == {}


async def test_a_full_queue_makes_alertmanager_send_again_until_all_are_reported(
    alertmanager: AlertmanagerFront,
    database_url: str,
    telegram: FakeTelegramServer,
    drop_cells: list[str],
) -> None:
    settings = _settings(
        database_url, telegram, alertmanager, alert_chats=f"default:{DEFAULT}",
        alert_queue_max=1, alert_concurrency=1,
    )  # fmt: skip
    # The first report is held at Telegram (a 429 for 5 s): its analysis fills the queue.
    telegram.fail_next("sendMessage", 429, retry_after=5)
    async with running_bot(settings, telegram):
        await alertmanager.push(firing(_drop(drop_cells[0])))

        async def first_queued() -> bool:
            return await _counts(database_url) == {"cell_traffic_drop": 1}

        await alertmanager.wait_until("the first analysis queued", first_queued)
        # Two more groups while the queue is full: 503, stored nothing, sent again.
        await alertmanager.push(firing(_drop(drop_cells[1])), firing(_drop(drop_cells[2])))

        async def refused() -> bool:
            return await alertmanager.am.requests_failed() >= 1

        await alertmanager.wait_until("a notification refused (503)", refused)
        assert await _counts(database_url) == {"cell_traffic_drop": 1}
        await telegram.wait_for(
            lambda: len(_headers(telegram, DEFAULT, "CellTrafficDrop")) == 3, timeout=90
        )
    assert await _counts(database_url) == {"cell_traffic_drop": 3}
    shown = {c for c in drop_cells[:3] for h in _headers(telegram, DEFAULT, "CellTrafficDrop")
             if f"cell={c}" in h.text}  # fmt: skip
    assert shown == set(drop_cells[:3])


# Alertmanager resolves the alert itself: Prometheus stops sending it, resolve_timeout passes.
@pytest.mark.alertmanager(timing=Timing(group_wait=0.3, group_interval=0.5,
                                        repeat_interval=60, resolve_timeout=4))  # fmt: skip
async def test_a_russian_mapping_gets_russian_reports(
    alertmanager: AlertmanagerFront,
    database_url: str,
    telegram: FakeTelegramServer,
    drop_cells: list[str],
    tmp_path: Path,
) -> None:
    mapping = tmp_path / "alerts.yaml"
    mapping.write_text(
        (DEFAULT_MAPPING.read_text(encoding="utf-8")).replace("language: en", "language: ru"),
        encoding="utf-8",
    )
    settings = _settings(
        database_url, telegram, alertmanager, alert_chats=f"default:{DEFAULT}",
        alert_mapping=mapping,
    )  # fmt: skip
    async with running_bot(settings, telegram):
        await alertmanager.push(firing(_drop(drop_cells[0])))
        await telegram.wait_for(lambda: len(telegram.sent_messages(DEFAULT)) >= 2, timeout=60)
        await telegram.wait_for(lambda: bool(telegram.edits(DEFAULT)), timeout=60)
    names = ["CellTrafficDrop", "cell", "severity", "page"]
    shown = [*_texts(telegram, DEFAULT), *(e.text for e in telegram.edits(DEFAULT))]
    assert shown[0].startswith("🔔 <b>CellTrafficDrop</b> сработал")
    assert "Основная причина" in shown[1]
    assert shown[-1].startswith("✅"), shown[-1]
    for text in shown:
        assert foreign_words(text, "ru", quoted=names) == [], text
