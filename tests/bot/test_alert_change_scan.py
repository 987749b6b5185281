"""An alert no runbook fits gets "what changed around it": the change scan of what its
labels name (issue 39), posted under the alert's "no runbook" header, as candidates and
never as a cause.

What the lab's real exporters published while real faults ran (tests/data/lab/lab-all.om.gz,
served by a real Prometheus; tests/bot/test_questions_recorded_lab.py says how it was
recorded), whytree's runtime reading it with its data clock at 75 s into a fault, its real
alert receiver and worker on a loopback port, the report in the fake Telegram chat.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import aiohttp
import asyncpg
import pytest
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode

from benchmarks.harness.polling_bot import TEST_TOKEN
from bot.alerts.receiver import ALERTMANAGER_PATH
from bot.telegram.process import telegram_api_server
from bot.wiring.api import ApiServer
from demo.services import unavailable_reason
from fake_servers.alertmanager import alert, notification
from fake_servers.telegram.server import FakeTelegramServer
from tests.recordings import DataClock, recorded_runtime

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

CHAT, HOOK_TOKEN = -100777, "scan-alert-token"


Clock = DataClock


@pytest.fixture
async def receiver(
    lab_recording: tuple[Path, dict[str, datetime]],
    database_url: str,
    telegram: FakeTelegramServer,
    tmp_path: Path,
) -> AsyncIterator[tuple[ApiServer, Clock, dict[str, datetime]]]:
    tsdb, starts = lab_recording
    clock = Clock()
    # PostgreSQL's log as the lab's server wrote it while its slots were taken: from 10 s into
    # the pg-connections fault, one refusal a second (nothing of it before)
    pg_log = tmp_path / "postgres.log"
    refused = starts["pg-connections"] + timedelta(seconds=10)
    pg_log.write_text(
        "".join(
            f"{refused + timedelta(seconds=i):%Y-%m-%d %H:%M:%S}.000 UTC [{4200 + i}] FATAL:  "
            "remaining connection slots are reserved for roles with the SUPERUSER attribute\n"
            for i in range(60)
        )
    )
    bot = Bot(
        TEST_TOKEN,
        session=AiohttpSession(api=TelegramAPIServer.from_base(telegram.base_url)),
        default=DefaultBotProperties(parse_mode=ParseMode.HTML),
    )
    try:
        async with (
            recorded_runtime(
                tsdb, database_url, tmp_path, clock, api_listen="127.0.0.1:0",
                alert_chats=f"default:{CHAT}", alert_webhook_token=HOOK_TOKEN,
                log_sources=f"postgres: {{files: ['{pg_log}']}}",
            ) as runtime,
            telegram_api_server(runtime, bot) as server,
        ):  # fmt: skip
            assert server is not None
            yield server, clock, starts
    finally:
        await bot.session.close()


async def _fire(server: ApiServer, labels: dict[str, str], starts_at: datetime) -> None:
    firing = alert(labels) | {"startsAt": starts_at.isoformat().replace("+00:00", "Z")}
    async with aiohttp.ClientSession() as http:
        answer = await http.post(
            server.url + ALERTMANAGER_PATH,
            json=notification([firing]),
            headers={"Authorization": f"Bearer {HOOK_TOKEN}"},
        )
        assert answer.status == 200, await answer.text()


async def _report(
    telegram: FakeTelegramServer, receiver: tuple[ApiServer, Clock, dict[str, datetime]],
    fault: str, labels: dict[str, str], messages: int,
) -> list[str]:  # fmt: skip
    server, clock, starts = receiver
    clock.at = starts[fault] + timedelta(seconds=75)  # the alert fired at the fault's start
    await _fire(server, labels, starts[fault])
    await telegram.wait_for(lambda: len(telegram.sent_messages(CHAT)) >= messages, timeout=60)
    return [m.text for m in telegram.sent_messages(CHAT)]


async def test_an_unmapped_alert_gets_what_changed_first_as_candidates(
    telegram: FakeTelegramServer, receiver: tuple[ApiServer, Clock, dict[str, datetime]]
) -> None:
    labels = {"alertname": "PgBackendsPileUp", "job": "postgres", "severity": "page"}
    header, report = await _report(telegram, receiver, "pg-connections", labels, 2)
    assert "No runbook for alert PgBackendsPileUp" in header
    assert report.startswith("what changed first: postgres (pg_stat_activity_count rose"), report
    assert "Primary cause" not in report  # candidates, never a cause
    # and below them, what is new in the logs since the alert began: the line to read first
    news = report.split("\n\n", 1)[1]
    assert news.startswith("New in the logs since"), report
    assert "remaining connection slots are reserved" in news and "(postgres)" in news


async def test_an_unmapped_probe_alert_gets_the_chart_of_its_symptom_and_first_candidate(
    telegram: FakeTelegramServer, receiver: tuple[ApiServer, Clock, dict[str, datetime]]
) -> None:
    """Right after the candidates, a photo: the probe as the scan read it and the first
    candidate's series on one time axis, its caption saying which."""
    labels = {
        "alertname": "CheckoutProbeOdd",
        "instance": "http://127.0.0.1:57789/checkout",
        "job": "blackbox",
    }
    header, report = await _report(telegram, receiver, "pg-lock", labels, 2)
    assert "No runbook for alert CheckoutProbeOdd" in header
    assert report.startswith("what changed first: "), report
    await telegram.wait_for(lambda: bool(telegram.sent_photos(CHAT)), timeout=60)
    [photo] = telegram.sent_photos(CHAT)
    caption = str(photo.params.get("caption"))
    assert caption.startswith("/checkout: probe_") and ", and what changed first: " in caption
    first = report.removeprefix("what changed first: ").split(" (", 1)[0]
    assert caption.split("what changed first: ", 1)[1] == first, caption


async def test_an_unmapped_alert_in_a_quiet_window_says_what_was_looked_at(
    telegram: FakeTelegramServer, receiver: tuple[ApiServer, Clock, dict[str, datetime]]
) -> None:
    labels = {"alertname": "WebLooksOdd", "job": "web"}
    header, report = await _report(telegram, receiver, "nothing-wrong", labels, 2)
    assert "No runbook for alert WebLooksOdd" in header
    assert "none changed before the symptom" in report and "looked at" in report, report
    assert "New in the logs" not in report  # nothing new was written in this window


async def test_an_alert_naming_nothing_scraped_gets_the_note_alone(
    telegram: FakeTelegramServer,
    receiver: tuple[ApiServer, Clock, dict[str, datetime]],
    database_url: str,
) -> None:
    labels = {"alertname": "KafkaLag", "job": "kafka-exporter", "instance": "10.9.9.9:9308"}
    [note] = await _report(telegram, receiver, "pg-connections", labels, 1)
    assert "No runbook for alert KafkaLag" in note
    conn = await asyncpg.connect(database_url)
    try:  # posted: the header and, had there been one, the report after it were sent
        for _ in range(100):
            if await conn.fetchval("SELECT status FROM alert_analyses") == "posted":
                break
            await asyncio.sleep(0.1)
        assert await conn.fetchval("SELECT status FROM alert_analyses") == "posted"
    finally:
        await conn.close()
    assert [m.text for m in telegram.sent_messages(CHAT)] == [note]
