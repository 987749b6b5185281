"""A message is never taken for another (issue 26): updates kept per bot and per body, the
retention janitor, and the migration from the schema before it — the real bot against
fake Telegram servers, all on one real database."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from benchmarks.harness import takeover
from benchmarks.harness.polling_bot import (
    TEST_TOKEN,
    quick_path_settings,
    running_bot,
    running_webhook_bot,
    webhook_settings,
)
from bot.config import Settings
from bot.telegram.inbox import store_update
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from storage.migrate import apply_migrations
from tests import pg
from tests.bot.settled import inbox_settled

ANSWER = "This is the fake model's answer."
OTHER_TOKEN = "654321:OTHER-token-abcdefghijklmnopqrstuvwxyz"
QUESTION = "Why did traffic drop on cell 10291?"
REUSED = "has the id of an earlier update with another body"


def _answers(telegram: FakeTelegramServer, chat: int) -> list[str]:
    return [m.text for m in telegram.sent_messages(chat) if ANSWER in m.text]


async def _fetch(database_url: str, sql: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(database_url)
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


def _short_horizon(settings: Settings, seconds: float) -> Settings:
    """A horizon of seconds, past the model's range (meant for hours): a test's time."""
    delivery = settings.delivery.model_copy(update={"inbox_retention_hours": seconds / 3600})
    return settings.model_copy(update={"delivery": delivery})


async def test_two_bots_with_coinciding_update_ids_on_one_database_both_answer_once(
    database_url: str, llm: FakeOpenAIServer
) -> None:
    async with (
        FakeTelegramServer(bot_id=123456) as first,
        FakeTelegramServer(bot_id=654321) as second,
    ):
        bots = [
            quick_path_settings(database_url=database_url, telegram=t, llm_base_url=llm.base_url,
                                telegram_bot_token=token)
            for t, token in ((first, TEST_TOKEN), (second, OTHER_TOKEN))
        ]  # fmt: skip
        async with running_bot(bots[0], first), running_bot(bots[1], second):
            ids = [t.push_message(31, QUESTION) for t in (first, second)]
            assert ids[0] == ids[1]  # each bot's own sequence: the same number
            await first.wait_for(lambda: bool(_answers(first, 31)), timeout=60)
            await second.wait_for(lambda: bool(_answers(second, 31)), timeout=60)
            await _until_finished(database_url)  # nothing more can follow
    assert len(_answers(first, 31)) == 1 and len(_answers(second, 31)) == 1
    rows = await _fetch(database_url, "SELECT bot_id, update_id, status FROM inbox_updates")
    assert sorted((r["bot_id"], r["status"]) for r in rows) == [
        (123456, "done"),
        (654321, "done"),
    ]
    assert {r["update_id"] for r in rows} == {ids[0]}


async def test_a_redelivery_is_answered_once_and_a_reused_id_is_a_new_question(
    database_url: str,
    telegram: FakeTelegramServer,
    llm: FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = webhook_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        strategy_enabled=False,
    )
    caplog.set_level(logging.WARNING, logger="bot.telegram.inbox")
    async with running_webhook_bot(settings, telegram):
        update_id = telegram.push_message(32, QUESTION)
        await telegram.wait_for(lambda: bool(_answers(telegram, 32)), timeout=60)
        telegram.push_update(copy.deepcopy(telegram.pushed[-1]))  # the same update again
        await telegram.wait_for(lambda: len(telegram.delivered) == 2, timeout=60)
        other = copy.deepcopy(telegram.pushed[-1])
        other["message"]["text"] = "What is a hypothesis tree?"  # another body, the same id
        telegram.push_update(other)
        telegram.push_update(copy.deepcopy(other))  # and that one delivered twice
        await telegram.wait_for(lambda: len(_answers(telegram, 32)) == 2, timeout=60)
        await telegram.wait_for(lambda: len(telegram.delivered) == 4, timeout=60)
        await inbox_settled(database_url, stored=2)
    assert len(_answers(telegram, 32)) == 2  # the first question once, the second once
    assert len(llm.requests) == 2
    warnings = [r for r in caplog.records if REUSED in r.getMessage()]
    assert len(warnings) == 1 and str(update_id) in warnings[0].getMessage()
    rows = await _fetch(database_url, "SELECT update_id, status FROM inbox_updates")
    assert [(r["update_id"], r["status"]) for r in rows] == [(update_id, "done")] * 2


async def test_the_same_id_with_another_body_after_the_horizon_is_answered(
    database_url: str,
    telegram: FakeTelegramServer,
    llm: FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = webhook_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        strategy_enabled=False,
    )
    caplog.set_level(logging.INFO)
    async with running_webhook_bot(_short_horizon(settings, 1.0), telegram):
        telegram.push_message(33, QUESTION)
        await telegram.wait_for(lambda: bool(_answers(telegram, 33)), timeout=60)
        first = copy.deepcopy(telegram.pushed[-1])
        for _ in range(300):  # the janitor deletes it once it is older than the horizon
            if not await _fetch(database_url, "SELECT 1 FROM inbox_updates"):
                break
            await asyncio.sleep(0.1)
        assert not await _fetch(database_url, "SELECT 1 FROM outbox_messages")
        first["message"]["text"] = "What is a hypothesis tree?"
        telegram.push_update(first)
        await telegram.wait_for(lambda: len(_answers(telegram, 33)) == 2, timeout=60)
    assert not [r for r in caplog.records if REUSED in r.getMessage()]  # nothing to meet
    deleted = " ".join(
        r.getMessage() for r in caplog.records if "retention: deleted" in r.getMessage()
    )
    assert "1 updates" in deleted and "1 replies" in deleted  # in one run or two


_FINISHED = (
    "SELECT count(*) AS n FROM inbox_updates WHERE status IN ('done', 'failed', 'rejected')"
)


async def _until_finished(database_url: str) -> None:
    """Until every update has its outcome (polled; a busy machine takes longer)."""
    async with takeover.connected(database_url) as conn:
        assert await takeover.until_finished(conn, limit=60), "an update was never finished"


@pytest.mark.slow
async def test_a_soak_leaves_the_inbox_no_larger_than_the_horizons_worth(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    horizon, rate, count = 1.5, 10.0, 80  # updates a second; 8 s of steady load
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    sizes: list[int] = []
    async with running_bot(_short_horizon(settings, horizon), telegram):
        start = time.monotonic()
        for n in range(count):
            telegram.push_message(1000 + n, QUESTION)
            [size] = await _fetch(database_url, _FINISHED)
            sizes.append(size["n"])
            await asyncio.sleep(max(0.0, start + (n + 1) / rate - time.monotonic()))
        await telegram.wait_for(
            lambda: all(_answers(telegram, 1000 + n) for n in range(count)), timeout=30
        )
    # The horizon's worth, plus a janitor's period (a twelfth of it) and 2 s for a run that
    # a busy machine delays (what waits to be answered is the bot's lag under load, not
    # retention's: not counted). Without retention all 80 would stay.
    bound = rate * (horizon + horizon / 12 + 2.0)
    assert count > 2 * bound and max(sizes) <= bound, sizes
    assert all(len(_answers(telegram, 1000 + n)) == 1 for n in range(count))


@pytest.fixture
async def database_of_today(pg_server_dsn: str) -> AsyncIterator[str]:
    """A database with the schema before issue 26 (migrations up to 012)."""
    name = await pg.clone(pg_server_dsn, "template0")
    dsn = pg.with_database(pg_server_dsn, name)
    conn = await asyncpg.connect(dsn)
    try:
        await apply_migrations(conn, until=12)
    finally:
        await conn.close()
    yield dsn
    await pg.drop(pg_server_dsn, name)


def _message(chat: int, update_id: int, text: str) -> dict[str, Any]:
    user = {"id": chat, "is_bot": False, "first_name": "T", "language_code": "en"}
    return {
        "update_id": update_id,
        "message": {
            "message_id": 1,
            "date": 1700000000,
            "chat": {"id": chat, "type": "private", "first_name": "T"},
            "from": user,
            "text": text,
        },
    }


async def test_the_migration_keeps_undelivered_updates_deliverable_and_delivered_ones_done(
    database_of_today: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    """Rows as the code before issue 26 wrote them: an update waiting; one answered; one
    whose process died after sending its answer; one whose process died before."""
    sent = {"message_id": 77, "date": 1700000000, "chat": {"id": 43, "type": "private"},
            "text": ANSWER}  # fmt: skip
    conn = await asyncpg.connect(database_of_today)
    try:
        await conn.set_type_codec("jsonb", encoder=_json, decoder=_json, schema="pg_catalog")
        for chat, status in (
            (41, "pending"),
            (42, "done"),
            (43, "processing"),
            (44, "processing"),
        ):
            await conn.execute(
                "INSERT INTO inbox_updates (update_id, payload, chat_id, status, attempts, owner,"
                " lease_until) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                9100 + chat,
                _message(chat, 9100 + chat, QUESTION),
                chat,
                status,
                0 if status == "pending" else 1,
                None if status == "pending" else "dead",
                None if status != "processing" else _long_ago(),
            )
        for chat in (42, 43):
            await conn.execute(
                "INSERT INTO outbox_messages (key, chat_id, method, request, status, result)"
                " VALUES ($1, $2, 'sendMessage', '{}', 'sent', $3)",
                f"u{9100 + chat}:0",
                chat,
                sent,
            )
        await conn.execute(
            "INSERT INTO leases (scope, name, holder, lease_until)"
            " VALUES ('chat', '43', 'u9143', now() + interval '1 hour')"
        )  # the dead process's chat lock: the update gets it back, not "busy"
    finally:
        await conn.close()
    settings = quick_path_settings(
        database_url=database_of_today, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram) as running:
        await telegram.wait_for(
            lambda: bool(_answers(telegram, 41) and _answers(telegram, 44)), timeout=20
        )
        await telegram.wait_for(lambda: len(llm.requests) == 3, timeout=60)
        again = await store_update(running.worker.receiving, _message(42, 9142, QUESTION))
        assert again is False  # a copy of an update answered before the migration
        await _until_finished(database_of_today)
    assert [len(_answers(telegram, chat)) for chat in (41, 42, 43, 44)] == [1, 0, 0, 1]
    rows = await _fetch(database_of_today, "SELECT bot_id, status FROM inbox_updates")
    assert [(r["bot_id"], r["status"]) for r in rows] == [(123456, "done")] * 4
    keys = await _fetch(database_of_today, "SELECT key FROM outbox_messages ORDER BY key")
    assert all(r["key"].startswith("i") for r in keys) and len(keys) == 4


def _json(value: Any) -> Any:
    """jsonb in and out as the code before wrote it (a dict; its pool's codec)."""
    return json.dumps(value) if not isinstance(value, str) else json.loads(value)


def _long_ago() -> datetime:
    return datetime.now(UTC) - timedelta(minutes=5)
