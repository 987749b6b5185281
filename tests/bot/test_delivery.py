"""Exactly-once delivery in one process: the inbox, the outbox, Telegram's transient errors.

The real bot (polling into the inbox, answering from it) against the fake Telegram
server and the fake LLM; the inbox and outbox are real tables in the test database.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import asyncpg
import pytest

from benchmarks.harness import takeover
from benchmarks.harness.polling_bot import TEST_TOKEN, quick_path_settings, running_bot
from bot.telegram.inbox import MAX_UPDATE_BYTES, store_update
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from storage.inbox import PgInbox
from storage.pool import create_pool
from tests.bot.settled import inbox_settled
from tests.fakes.pg_proxy import PgProxy

ANSWER = "This is the fake model's answer."
BOT = int(TEST_TOKEN.split(":")[0])


def _settings(database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer) -> Any:
    return quick_path_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        inbox_lease_sec=2,
    )


async def _rows(database_url: str, sql: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(database_url)
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


def _answers(telegram: FakeTelegramServer, chat: int) -> list[str]:
    return [m.text for m in telegram.sent_messages(chat) if ANSWER in m.text]


FAILURES = [(500, 1, None), (500, 2, None), (502, 1, "<html><body>502 Bad Gateway</body>")]


@pytest.mark.parametrize("failure", FAILURES)
async def test_a_5xx_on_the_reply_still_delivers_the_answer_once(
    database_url: str,
    telegram: FakeTelegramServer,
    llm: FakeOpenAIServer,
    failure: tuple[int, int, str | None],
) -> None:
    status, times, raw = failure
    async with running_bot(_settings(database_url, telegram, llm), telegram):
        telegram.fail_next("sendMessage", status, times=times, raw_body=raw)
        telegram.push_message(11, "what is a hypothesis tree?")
        await telegram.wait_for(lambda: bool(_answers(telegram, 11)), timeout=60)
        await inbox_settled(database_url)  # its outcome recorded: nothing else follows
    assert len(_answers(telegram, 11)) == 1
    assert not any("went wrong" in m.text for m in telegram.sent_messages(11))
    statuses = [c.status for c in telegram.calls_of("sendMessage")]
    assert statuses == [status] * times + [200]
    [row] = await _rows(database_url, "SELECT status, attempts FROM outbox_messages")
    assert row["status"] == "sent" and row["attempts"] == 1
    [inbox] = await _rows(database_url, "SELECT status FROM inbox_updates")
    assert inbox["status"] == "done"


async def test_a_429_waits_retry_after_then_delivers(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    async with running_bot(_settings(database_url, telegram, llm), telegram):
        telegram.fail_next("sendMessage", 429, retry_after=3)
        telegram.push_message(12, "what is a hypothesis tree?")
        await telegram.wait_for(lambda: bool(_answers(telegram, 12)), timeout=60)
    refused, accepted = telegram.calls_of("sendMessage")
    assert refused.status == 429 and accepted.at - refused.at >= 3.0
    assert len(_answers(telegram, 12)) == 1


async def test_a_redelivered_update_is_answered_once(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    async with running_bot(_settings(database_url, telegram, llm), telegram) as running:
        update_id = telegram.push_message(13, "what is a hypothesis tree?")
        await telegram.wait_for(lambda: bool(_answers(telegram, 13)), timeout=60)
        [row] = await _rows(database_url, "SELECT payload FROM inbox_updates")
        stored = json.loads(row["payload"])  # a plain connection: the JSON as text
        # Telegram delivers it once more (as after a lost acknowledgement): the copy goes
        # through the same store as polling and the webhook, and is recognised.
        again = await store_update(running.worker.receiving, copy.deepcopy(stored))
        assert again is False  # already in the inbox
        running.worker.wake()
        await inbox_settled(database_url)  # and it set nothing going
    assert len(_answers(telegram, 13)) == 1
    [inbox] = await _rows(database_url, "SELECT update_id, status FROM inbox_updates")
    assert inbox["update_id"] == update_id and inbox["status"] == "done"
    assert len(llm.requests) == 1


async def test_malformed_and_oversized_updates_are_rejected_with_the_reason(
    pool: asyncpg.Pool[Any],
) -> None:
    inbox = PgInbox(pool, bot_id=BOT)
    assert await store_update(inbox, {"update_id": 1, "message": {"chat": "nonsense"}}) is False
    big = {"update_id": 2, "message": {"text": "x" * (MAX_UPDATE_BYTES + 1)}}
    assert await store_update(inbox, big) is False
    assert await store_update(inbox, {"no": "id"}) is False
    rows = await pool.fetch("SELECT update_id, status, error FROM inbox_updates ORDER BY 1")
    assert [(r["update_id"], r["status"]) for r in rows] == [(1, "rejected"), (2, "rejected")]
    assert rows[0]["error"].startswith("malformed") and rows[1]["error"].startswith("too large")
    assert await inbox.claim("me", lease_sec=5) is None  # never processed


async def test_an_update_whose_processor_keeps_dying_is_failed_and_the_user_told_once(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    payload = _message_update(14, 9001, "why did traffic drop?")
    pool = await create_pool(database_url)
    try:
        await PgInbox(pool, bot_id=BOT).add(9001, payload, chat_id=14)
        # Claimed five times by processes that died (the lease ran out each time).
        await pool.execute(
            "UPDATE inbox_updates SET status = 'processing', attempts = 5, owner = 'dead',"
            " lease_until = now() - interval '1 second'"
        )
    finally:
        await pool.close()
    async with running_bot(_settings(database_url, telegram, llm), telegram):
        await telegram.wait_for(lambda: bool(telegram.sent_messages(14)), timeout=60)
        await _until_finished(database_url)
    [notice] = telegram.sent_messages(14)
    assert "several attempts" in notice.text
    [row] = await _rows(database_url, "SELECT status, error FROM inbox_updates")
    assert row["status"] == "failed" and "poison" in row["error"]
    assert not llm.requests  # never processed again


async def test_an_update_taken_over_after_a_crash_does_not_resend_what_was_sent(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    """A process sent the answer, then died before recording the update done: the next
    process answers the update again, finds its first reply sent, and sends nothing."""
    pool = await create_pool(database_url)
    try:
        await PgInbox(pool, bot_id=BOT).add(
            9002, _message_update(15, 9002, "what is a tree?"), chat_id=15
        )
        await pool.execute(
            "UPDATE inbox_updates SET status = 'processing', attempts = 1, owner = 'dead',"
            " lease_until = now() - interval '1 second'"
        )
        sent = {"message_id": 77, "date": 1700000000, "chat": {"id": 15, "type": "private"},
                "text": ANSWER}  # fmt: skip
        await pool.execute(
            "INSERT INTO outbox_messages (key, chat_id, method, request, status, result)"
            " SELECT 'i' || id || ':0', 15, 'sendMessage', '{}', 'sent', $1 FROM inbox_updates",
            sent,
        )
    finally:
        await pool.close()
    async with running_bot(_settings(database_url, telegram, llm), telegram):
        await telegram.wait_for(lambda: bool(llm.requests), timeout=60)
        await _until_finished(database_url)
    assert not telegram.sent_messages(15)
    [row] = await _rows(database_url, "SELECT status, attempts FROM inbox_updates")
    assert row["status"] == "done" and row["attempts"] == 2


async def _until_finished(database_url: str) -> None:
    """Until every update has its outcome (polled; a busy machine takes longer)."""
    async with takeover.connected(database_url) as conn:
        assert await takeover.until_finished(conn, limit=60), "an update was never finished"


def _message_update(chat: int, update_id: int, text: str) -> dict[str, Any]:
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


@pytest.mark.slow
async def test_postgresql_stopped_mid_answer_then_back_answers_once_without_an_error(
    database_url: str, pg_server_dsn: str, telegram: FakeTelegramServer
) -> None:
    """The database stops while the model is thinking: nothing can be recorded, so no
    reply goes out; once it is back the update is answered again — once, no error text."""
    async with PgProxy(pg_server_dsn) as proxy, FakeOpenAIServer(latency=1.5) as llm:
        settings = quick_path_settings(
            database_url=proxy.dsn(database_url),
            telegram=telegram,
            llm_base_url=llm.base_url,
            inbox_lease_sec=2,
        )
        async with running_bot(settings, telegram):
            telegram.push_message(16, "what is a hypothesis tree?")
            await telegram.wait_for(lambda: bool(llm.requests), timeout=60)
            proxy.stop()
            await asyncio.sleep(3)  # the behaviour under test: a 3 s outage mid-answer
            assert not telegram.sent_messages(16)
            proxy.start()
            await telegram.wait_for(lambda: bool(_answers(telegram, 16)), timeout=60)
            await _until_finished(database_url)
    assert len(_answers(telegram, 16)) == 1
    assert len(telegram.sent_messages(16)) == 1  # no "try again later" before it
    [row] = await _rows(database_url, "SELECT status, attempts FROM inbox_updates")
    assert row["status"] == "done" and row["attempts"] >= 2
