"""Alertmanager's notifications posted to the running bot: one analysis per alert group,
the report in the fake Telegram chat, the resolved edit; and what is refused."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from benchmarks.harness.polling_bot import RunningBot, harness_settings, running_bot
from bot.alerts.mapping import DEFAULT_MAPPING
from demo.dataset import ExampleQuestion
from fake_servers.alertmanager import alert, notification, post_alerts
from fake_servers.telegram.server import FakeTelegramServer, RecordedCall
from tests.language import foreign_words

pytestmark = pytest.mark.slow

TOKEN = "alert-token-for-tests"
RADIO, DEFAULT = -100123, -100456


@pytest.fixture
def drop_cells(demo_examples: list[ExampleQuestion]) -> list[str]:
    """The demo dataset loaded; cells with a technical traffic drop."""
    return [e.cellname for e in demo_examples if e.kind == "technical"]


@pytest.fixture
async def bot(
    database_url: str, telegram: FakeTelegramServer, drop_cells: list[str]
) -> AsyncIterator[RunningBot]:
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


def _drop(cell: str, **extra: str) -> dict[str, Any]:
    return alert({"alertname": "CellTrafficDrop", "cell": cell, "severity": "page", **extra})


def _texts(telegram: FakeTelegramServer, chat: int) -> list[str]:
    return [m.text for m in telegram.sent_messages(chat)]


def _headers(telegram: FakeTelegramServer, chat: int, name: str) -> list[RecordedCall]:
    return [m for m in telegram.sent_messages(chat) if m.text.startswith(f"🔔 <b>{name}</b>")]


async def _counts(database_url: str) -> dict[str, int]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT coalesce(runbook, 'none') AS r, count(*) AS n FROM alert_analyses GROUP BY 1"
        )
    finally:
        await conn.close()
    return {r["r"]: r["n"] for r in rows}


async def test_alert_groups_are_investigated_once_posted_and_resolved(
    bot: RunningBot, telegram: FakeTelegramServer, drop_cells: list[str], database_url: str
) -> None:
    assert bot.api is not None
    url = bot.api.url
    cell_a, cell_b = drop_cells[0], drop_cells[1]
    group = notification([
        _drop(cell_a, instance="probe-1"),
        _drop(cell_a, instance="probe-2"),  # another alert, same runbook + cell: shared
        _drop(cell_b, team="radio"),
    ])  # fmt: skip
    async with aiohttp.ClientSession() as http:
        status, body = await post_alerts(http, url, group, token=TOKEN)
        assert status == 200, body
        assert (body["started"], body["joined"]) == (2, 1)
        # Alertmanager repeats the notification: nothing new starts.
        status, body = await post_alerts(http, url, group, token=TOKEN)
        assert (status, body["started"], body["duplicate"]) == (200, 0, 3)

        await telegram.wait_for(
            lambda: (
                bool(_headers(telegram, DEFAULT, "CellTrafficDrop"))
                and bool(_headers(telegram, RADIO, "CellTrafficDrop"))
                and len(telegram.sent_messages(DEFAULT)) >= 2
                and len(telegram.sent_messages(RADIO)) >= 2
            ),
            timeout=60,
        )
        [header_a] = _headers(telegram, DEFAULT, "CellTrafficDrop")
        [header_b] = _headers(telegram, RADIO, "CellTrafficDrop")
        assert f"cell={cell_a}" in header_a.text and "cell_traffic_drop" in header_a.text
        assert f"cell={cell_b}" in header_b.text
        report_a = "\n".join(_texts(telegram, DEFAULT)[1:])
        assert "Primary cause:</b> Technical problem" in report_a, report_a
        assert "planner: runbook" in report_a
        assert await _counts(database_url) == {"cell_traffic_drop": 2}

        # One of the two alerts of cell A resolves: the report stays as it is ...
        resolved = [_drop(cell_a, instance="probe-1") | {"status": "resolved"}]
        resolved[0]["endsAt"] = "2024-05-20T09:30:00Z"
        status, body = await post_alerts(http, url, notification(resolved), token=TOKEN)
        assert (status, body["resolved"]) == (200, 0)
        assert telegram.edits(DEFAULT) == []
        # ... the second one resolves too: the posted report says so.
        last = [_drop(cell_a, instance="probe-2") | {"status": "resolved"}]
        last[0]["endsAt"] = "2024-05-20T09:45:00Z"
        status, body = await post_alerts(http, url, notification(last), token=TOKEN)
        assert (status, body["resolved"]) == (200, 1)
        [edit] = telegram.edits(DEFAULT, header_a.result["message_id"])
        assert edit.text.startswith("✅ Resolved at 2024-05-20 09:45 UTC")
        assert f"cell={cell_a}" in edit.text
        assert telegram.edits(RADIO) == []  # cell B still fires


async def test_unmapped_and_injected_alerts_are_noted_once_never_run(
    bot: RunningBot, telegram: FakeTelegramServer, database_url: str
) -> None:
    assert bot.api is not None
    injected = "1'; DROP TABLE demo.cells; --"
    group = notification([
        alert({"alertname": "DiskFull", "host": "db-1"}),
        _drop(injected),
    ])  # fmt: skip
    async with aiohttp.ClientSession() as http:
        for _ in range(2):
            status, _body = await post_alerts(http, bot.api.url, group, token=TOKEN)
            assert status == 200
        await telegram.wait_for(lambda: len(telegram.sent_messages(DEFAULT)) >= 2, timeout=30)
    texts = _texts(telegram, DEFAULT)
    assert sum("No runbook for alert DiskFull" in t for t in texts) == 1
    assert sum("label cell is not a plain name" in t for t in texts) == 1
    assert await _counts(database_url) == {"none": 2}  # two notes, no analysis
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("SELECT count(*) FROM demo.cells") > 0
    finally:
        await conn.close()


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
    payload = body or json.dumps(notification([_drop("10001")])).encode()
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{bot.api.url}/alerts/alertmanager", data=payload, headers=headers) as resp,
    ):
        assert resp.status == status
        assert reason in (await resp.json())["error"]
    assert await _counts(database_url) == {}


async def test_a_full_queue_asks_alertmanager_to_retry_and_stores_nothing(
    database_url: str, telegram: FakeTelegramServer, drop_cells: list[str]
) -> None:
    settings = harness_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=None,
        api_listen="127.0.0.1:0",
        alert_chats=f"default:{DEFAULT}",
        alert_webhook_token=TOKEN,
        alert_queue_max=1,
        alert_concurrency=1,
    )
    first = notification([_drop(drop_cells[0]), _drop(drop_cells[1])])
    later = notification([_drop(drop_cells[2])])
    async with running_bot(settings, telegram) as bot, aiohttp.ClientSession() as http:
        assert bot.api is not None
        status, body = await post_alerts(http, bot.api.url, first, token=TOKEN)
        assert (status, body["started"]) == (200, 2)
        status, body = await post_alerts(http, bot.api.url, later, token=TOKEN)
        assert status == 503 and "too many" in body["error"]
        assert await _counts(database_url) == {"cell_traffic_drop": 2}
        await telegram.wait_for(
            lambda: len(_headers(telegram, DEFAULT, "CellTrafficDrop")) == 2, timeout=60
        )
        for _ in range(60):  # Alertmanager retries until the queue has room
            status, body = await post_alerts(http, bot.api.url, later, token=TOKEN)
            if status != 503:
                break
            await asyncio.sleep(0.25)
        assert (status, body["started"]) == (200, 1)


async def test_a_russian_mapping_gets_russian_reports(
    database_url: str, telegram: FakeTelegramServer, drop_cells: list[str], tmp_path: Path
) -> None:
    mapping = tmp_path / "alerts.yaml"
    mapping.write_text(
        (DEFAULT_MAPPING.read_text(encoding="utf-8")).replace("language: en", "language: ru"),
        encoding="utf-8",
    )
    settings = harness_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=None,
        api_listen="127.0.0.1:0",
        alert_chats=f"default:{DEFAULT}",
        alert_webhook_token=TOKEN,
        alert_mapping=mapping,
    )
    firing = _drop(drop_cells[0])
    async with running_bot(settings, telegram) as bot, aiohttp.ClientSession() as http:
        assert bot.api is not None
        await post_alerts(http, bot.api.url, notification([firing]), token=TOKEN)
        await telegram.wait_for(lambda: len(telegram.sent_messages(DEFAULT)) >= 2, timeout=60)
        resolved = firing | {"status": "resolved", "endsAt": "2024-05-20T09:45:00Z"}
        await post_alerts(http, bot.api.url, notification([resolved]), token=TOKEN)
        await telegram.wait_for(lambda: bool(telegram.edits(DEFAULT)), timeout=10)
    names = ["CellTrafficDrop", "cell", "severity", "page"]
    shown = [*_texts(telegram, DEFAULT), *(e.text for e in telegram.edits(DEFAULT))]
    assert shown[0].startswith("🔔 <b>CellTrafficDrop</b> сработал")
    assert "Основная причина" in shown[1]
    for text in shown:
        assert foreign_words(text, "ru", quoted=names) == [], text
