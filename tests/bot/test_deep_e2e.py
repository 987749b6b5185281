"""Deep analysis through the bot: strategy -> durable job -> tree -> report -> tree button.

The fake LLM plays the strategy selector and the LLM planner (benchmarks/deep_script.py);
checks are real read-only SQL against a table in the test database.
"""

from __future__ import annotations

import asyncpg
import pytest

from benchmarks.deep_script import outage_script
from benchmarks.harness.llm_routes import decision, routed
from benchmarks.harness.polling_bot import harness_settings, running_bot
from bot.trees.picture.dot_runner import find_dot
from bot.trees.picture.pictures import png_size
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from reasoning_core.ports.planning import PlanningContext
from storage.jobs import PgJobStore
from storage.pool import create_pool
from tests.bot.replies import buttons

CHAT = 901
#: Without Graphviz the tree button answers with the text view (tested in test_tree_picture).
GRAPHVIZ = find_dot() is not None
QUESTION = "why did traffic drop on cell 12345?"


@pytest.fixture
async def cell_days(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(
            "CREATE SCHEMA demo; CREATE TABLE demo.cell_days (cellname text, availability float8);"
            "INSERT INTO demo.cell_days VALUES ('12345', 61.0), ('12345', 99.7);"
        )
    finally:
        await conn.close()


async def test_deep_question_report_and_tree_button(
    database_url: str, cell_days: None, telegram: FakeTelegramServer
) -> None:
    script = outage_script("12345")
    async with FakeOpenAIServer(latency=0.35) as llm:
        llm.script(routed(strategy=decision("deep"), answer=script))
        settings = harness_settings(
            database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
        )
        async with running_bot(settings, telegram):
            telegram.push_message(CHAT, QUESTION)
            await telegram.wait_for(
                lambda: any("Primary cause" in m.text for m in telegram.sent_messages(CHAT)),
                timeout=20,
            )
            report = next(m for m in telegram.sent_messages(CHAT) if "Primary cause" in m.text)
            status = telegram.sent_messages(CHAT)[0]
            [(label, data)] = buttons(report)  # no PUBLIC_URL: no "Open in browser"
            telegram.push_callback(CHAT, CHAT + 1, data, report.result["message_id"])  # a stranger
            await telegram.wait_for(lambda: len(telegram.callback_answers) == 1)
            telegram.push_callback(CHAT, CHAT, data, report.result["message_id"])
            if GRAPHVIZ:
                await telegram.wait_for(lambda: bool(telegram.sent_photos(CHAT)), timeout=60)
                [photo] = telegram.sent_photos(CHAT)
                [(text_label, text_data)] = buttons(photo)
                telegram.push_callback(CHAT, CHAT, text_data, photo.result["message_id"])
            await telegram.wait_for(
                lambda: any("🌳" in m.text[:12] for m in telegram.sent_messages(CHAT))
            )
    assert "Availability outage" in report.text and "availability 61% vs 99.7%" in report.text
    assert (
        "Check the cell&#x27;s alarms" in report.text or "Check the cell's alarms" in report.text
    )
    assert "confidence" in report.text and label.startswith("🌳")
    assert (
        telegram.callback_answers[0].params.get("text") == "That reasoning tree is not available."
    )
    assert not telegram.sent_photos(CHAT + 1) and len(telegram.sent_photos(CHAT)) <= 1
    if GRAPHVIZ:  # the picture: a real PNG, captioned with the primary cause, text one tap away
        width, height = png_size(photo.params["photo"].data)
        assert width > 200 and height > 100 and photo.result["photo"][0]["width"] == width
        assert "Primary cause:</b> Availability outage" in photo.caption
        assert text_label == "📝 Text view"
    tree = next(m for m in telegram.sent_messages(CHAT) if "🌳" in m.text[:12])
    assert "Availability outage" in tree.text and "<pre>" in tree.params["text"]
    # Live progress: one status message, edited no more often than every 1.5 s, then removed.
    assert status.text.startswith("🔎")
    edits = [e.at for e in telegram.edits(CHAT, status.result["message_id"])]
    assert all(b - a >= 1.45 for a, b in zip([status.at, *edits], edits, strict=False))
    assert telegram.calls_of("deleteMessage")
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch("SELECT status, tree_id FROM deep_jobs")
    finally:
        await conn.close()
    assert [r["status"] for r in rows] == ["done"] and rows[0]["tree_id"]


async def test_a_job_left_running_by_a_crash_is_finished_and_delivered_at_start_up(
    database_url: str, cell_days: None, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.script(routed(strategy=decision("deep"), answer=outage_script("12345")))
    pool = await create_pool(database_url)
    try:
        await pool.execute("INSERT INTO users (id) VALUES ($1)", CHAT)
        jobs = PgJobStore(pool)
        ctx = PlanningContext(question=QUESTION, goal=QUESTION, user_id=CHAT)
        job = await jobs.enqueue(ctx, user_id=CHAT, chat_id=CHAT)
        await jobs.claim(job.id)  # "running" in a process that then crashed
        await pool.execute("UPDATE deep_jobs SET heartbeat_at = now() - interval '1 hour'")
    finally:
        await pool.close()
    settings = harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        [report] = await telegram.wait_for_messages(CHAT, 1, timeout=60)
    assert "Availability outage" in report.text
