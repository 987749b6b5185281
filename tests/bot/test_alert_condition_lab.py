"""The alert's own condition is its report's symptom (issue 53, item 3), and a parameter the
alert lacks is looked up in its own series (item 2).

What the lab's real exporters published while real faults ran (tests/data/lab, served by a
real Prometheus; tests/bot/test_questions_recorded_lab.py says how it was recorded), the
rules written in the collections' conventions
(tests/bot/alert_rules_recorded/lab-conventions.yml), whytree's runtime reading the
recording with its data clock, its real receiver and worker on a loopback port, the report
in the fake Telegram chat.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import asyncpg
import pytest
import yaml
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
from tests.recordings import LAB_DATA, DataClock, recorded_runtime

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

CHAT, HOOK_TOKEN = -100778, "condition-alert-token"
RULES = {
    rule["alert"]: rule["expr"]
    for group in yaml.safe_load(
        (Path(__file__).with_name("alert_rules_recorded") / "lab-conventions.yml").read_text()
    )["groups"]
    for rule in group["rules"]
}
#: The lab's size-limited disk in the recording, as node_exporter labels it.
DISK = {
    "device": "whytree-lab",
    "fstype": "tmpfs",
    "instance": "127.0.0.1:57427",
    "job": "node",
    "mountpoint": "/tmp/whytree-record-0pzde9uq/lab/disk",
}
PG_INSTANCE = "127.0.0.1:41713"


def _ends() -> dict[str, datetime]:
    events = json.loads((LAB_DATA / "lab-all.events.json").read_text())
    return {f["name"]: datetime.fromtimestamp(f["end"], tz=UTC) for f in events["faults"]}


@pytest.fixture
async def receiver(
    lab_recording: tuple[Path, dict[str, datetime]],
    database_url: str,
    telegram: FakeTelegramServer,
    tmp_path: Path,
) -> AsyncIterator[tuple[ApiServer, DataClock, dict[str, datetime]]]:
    tsdb, starts = lab_recording
    clock = DataClock()
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
            ) as runtime,
            telegram_api_server(runtime, bot) as server,
        ):  # fmt: skip
            assert server is not None
            yield server, clock, starts
    finally:
        await bot.session.close()


async def _fire(server: ApiServer, labels: dict[str, str], expr: str, since: datetime) -> None:
    firing = alert(labels, expr=expr) | {"startsAt": since.isoformat().replace("+00:00", "Z")}
    async with aiohttp.ClientSession() as http:
        answer = await http.post(
            server.url + ALERTMANAGER_PATH,
            json=notification([firing]),
            headers={"Authorization": f"Bearer {HOOK_TOKEN}"},
        )
        assert answer.status == 200, await answer.text()


async def _posted(telegram: FakeTelegramServer, count: int) -> list[str]:
    await telegram.wait_for(lambda: len(telegram.sent_messages(CHAT)) >= count, timeout=90)
    return [m.text for m in telegram.sent_messages(CHAT)]


def _filling() -> dict[str, str]:
    return {"alertname": "NodeFilesystemAlmostOutOfSpace", "severity": "warning", **DISK}


async def test_the_report_opens_with_the_alerts_condition_holding_now_and_since_when(
    telegram: FakeTelegramServer,
    receiver: tuple[ApiServer, DataClock, dict[str, datetime]],
) -> None:
    server, clock, starts = receiver
    began = starts["disk-full"]
    clock.at = began + timedelta(seconds=75)
    await _fire(server, _filling(), RULES["NodeFilesystemAlmostOutOfSpace"], began)
    header, report = await _posted(telegram, 2)
    assert header.startswith("🔔 <b>NodeFilesystemAlmostOutOfSpace</b>"), header
    first = report.split("\n\n", 1)[0]
    # in the alert's own terms: its comparison, the series it fired for, the value now
    assert first.startswith("<b>NodeFilesystemAlmostOutOfSpace: node_filesystem_avail_bytes"), (
        first
    )
    assert "* 100 &lt; 5 on " in first and f"mountpoint={DISK['mountpoint']}" in first, first
    value = float(first.split(": ")[2].split(" now")[0])
    assert 2.5 < value < 3.5, first  # 1 MiB of the 32 MiB disk left: 3.1 %
    since = first.split("since ")[1][:12].strip()
    # the condition began within the first scrapes of the fault, not at the window's start
    assert since in {
        (began + timedelta(seconds=s)).strftime("%-d %b %H:%M") for s in range(0, 40, 5)
    }, first
    assert "resolved" not in first


async def test_once_the_condition_no_longer_holds_the_report_says_it_resolved(
    telegram: FakeTelegramServer,
    receiver: tuple[ApiServer, DataClock, dict[str, datetime]],
) -> None:
    server, clock, starts = receiver
    began, ended = starts["disk-full"], _ends()["disk-full"]
    clock.at = ended + timedelta(seconds=90)  # the disk emptied again 90 s ago
    await _fire(server, _filling(), RULES["NodeFilesystemAlmostOutOfSpace"], began)
    _, report = await _posted(telegram, 2)
    first = report.split("\n\n", 1)[0]
    assert first.startswith("<b>NodeFilesystemAlmostOutOfSpace:"), first
    assert ": resolved (it held " in first, first
    value = float(first.split("; ")[-1].split(" now")[0])
    assert value > 90, first  # the disk is empty again: 100 % free


async def test_a_label_value_carrying_promql_is_never_spliced_into_a_query(
    telegram: FakeTelegramServer,
    receiver: tuple[ApiServer, DataClock, dict[str, datetime]],
) -> None:
    """An alert whose mountpoint label carries PromQL: its rule's expression is re-read as
    the parser renders it, and the alert's series picked by its labels here, so the value
    reaches no query. The expression holds for the lab's disk, which is not the alert's
    series as its labels say: the report says nothing of the condition rather than a
    wrong "resolved", and still comes."""
    server, clock, starts = receiver
    began = starts["disk-full"]
    clock.at = began + timedelta(seconds=75)
    labels = _filling() | {"mountpoint": '/x"} or vector(1) or up{a="'}
    await _fire(server, labels, RULES["NodeFilesystemAlmostOutOfSpace"], began)
    header, report = await _posted(telegram, 2)
    assert "runbook <code>host_disk</code>" in header, header
    first = report.split("\n\n", 1)[0]
    assert not first.startswith("<b>NodeFilesystemAlmostOutOfSpace"), first
    assert "vector(1)" not in report and "resolved" not in first


async def test_a_parameter_the_alert_lacks_is_looked_up_in_its_own_series(
    telegram: FakeTelegramServer,
    receiver: tuple[ApiServer, DataClock, dict[str, datetime]],
    database_url: str,
) -> None:
    server, clock, starts = receiver
    began = starts["pg-connections"]
    clock.at = began + timedelta(seconds=75)
    labels = {"alertname": "PostgresqlFewConnections", "datname": "postgres", "severity": "x"}
    await _fire(server, labels, RULES["PostgresqlFewConnections"], began)
    header, _ = await _posted(telegram, 2)
    assert "runbook <code>postgres_trouble</code>" in header, header
    assert f"instance={PG_INSTANCE} from the alert's own series" in header, header
    assert "left out" not in header
    conn = await asyncpg.connect(database_url)
    try:
        stored = await conn.fetchval("SELECT parameters FROM alert_analyses")
    finally:
        await conn.close()
    assert json.loads(stored) == {"instance": PG_INSTANCE}


async def test_a_parameter_its_series_do_not_carry_either_is_left_out_with_a_line(
    telegram: FakeTelegramServer,
    receiver: tuple[ApiServer, DataClock, dict[str, datetime]],
) -> None:
    server, clock, starts = receiver
    began = starts["pg-connections"]
    clock.at = began + timedelta(seconds=75)
    # a database the recording has no series of: nothing to take the instance from
    labels = {"alertname": "PostgresqlFewConnections", "datname": "shop", "severity": "x"}
    await _fire(server, labels, RULES["PostgresqlFewConnections"], began)
    header, *_ = await _posted(telegram, 1)
    assert "no label for parameter instance of the runbook: left out" in header, header
    assert "from the alert's own series" not in header


#: A rule whose own matcher value carries PromQL syntax: spliced back unescaped (the
#: syntax tree's plain text), it would read `… or vector(1) or up{a=""}` instead.
TRICKY = (
    'node_filesystem_avail_bytes{job="node",mountpoint!="x\\"} or vector(1) or up{a=\\""}'
    ' / node_filesystem_size_bytes{job="node"} * 100 < 5'
)


async def test_an_expression_whose_values_carry_promql_is_re_read_as_it_is(
    telegram: FakeTelegramServer,
    receiver: tuple[ApiServer, DataClock, dict[str, datetime]],
) -> None:
    server, clock, starts = receiver
    began = starts["disk-full"]
    clock.at = began + timedelta(seconds=75)
    await _fire(server, _filling() | {"alertname": "OddlyWrittenDiskRule"}, TRICKY, began)
    _, report = await _posted(telegram, 2)
    first = report.split("\n\n", 1)[0]
    assert first.startswith("<b>OddlyWrittenDiskRule: node_filesystem_avail_bytes"), first
    value = float(first.split(": ")[2].split(" now")[0])
    assert 2.5 < value < 3.5, first  # the lab's disk, as the rule itself reads it
