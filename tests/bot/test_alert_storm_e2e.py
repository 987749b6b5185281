"""An alert storm of alerts no runbook fits costs one change scan per alert group, not one
per alert (issue 53): thirty alerts of one rule, pushed to a real Alertmanager that groups
them by alert name, become one analysis and one note in the chat."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest
import yaml

from benchmarks.harness.polling_bot import harness_settings, running_bot
from fake_servers.telegram.server import FakeTelegramServer
from tests.bot.alertmanager_front import AlertmanagerFront, firing

pytestmark = pytest.mark.slow

CHAT = -100779
STORM = 30
[UNREAD] = [
    rule["expr"]
    for group in yaml.safe_load(
        (Path(__file__).with_name("alert_rules_recorded") / "lab-conventions.yml").read_text()
    )["groups"]
    for rule in group["rules"]
    if rule["alert"] == "KafkaConsumersGroupLag"
]


async def _analyses(database_url: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(database_url)
    try:
        return list(await conn.fetch("SELECT dedup_key, status FROM alert_analyses"))
    finally:
        await conn.close()


@pytest.mark.alertmanager(group_by=["alertname"])
async def test_a_storm_of_unmapped_alerts_is_one_scan_per_group(
    alertmanager: AlertmanagerFront, telegram: FakeTelegramServer, database_url: str
) -> None:
    settings = harness_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=None,
        alert_chats=f"default:{CHAT}",
        **alertmanager.bot_settings,
    )
    storm = [
        firing(
            {"alertname": "KafkaConsumersGroupLag", "instance": f"kafka-{i}:9308", "job": "kafka"},
            expr=UNREAD,
        )
        for i in range(STORM)
    ]
    async with running_bot(settings, telegram):
        await alertmanager.push(*storm)

        async def all_seen() -> bool:
            conn = await asyncpg.connect(database_url)
            try:
                seen = await conn.fetchval("SELECT count(*) FROM alert_fingerprints")
                return bool(seen == STORM)
            finally:
                await conn.close()

        await alertmanager.wait_until(f"all {STORM} alerts recorded", all_seen)

        async def posted() -> bool:
            return all(r["status"] == "posted" for r in await _analyses(database_url))

        await alertmanager.wait_until("the analysis posted", posted)
    [analysis] = await _analyses(database_url)
    assert analysis["dedup_key"].startswith("unmapped:group:")
    notes = [m.text for m in telegram.sent_messages(CHAT) if "No runbook" in m.text]
    assert len(notes) == 1, notes
    assert "KafkaConsumersGroupLag" in notes[0]
