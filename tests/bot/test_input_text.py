"""Input normalised at the edge: Unicode digits, NUL and control characters."""

from __future__ import annotations

import unicodedata

import asyncpg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.harness.polling_bot import harness_settings, quick_path_settings, running_bot
from bot.terminal import question
from demo.dataset import generate_demo
from demo.loader import load_demo
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from reasoning_core import clean_text
from storage.pool import create_pool
from tests.bot.replies import wait_for_replies


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("cell １０２９１", "cell 10291"),  # full-width: NFKC
        ("сота ١٠٢٩١", "сота 10291"),  # Arabic-Indic: not NFKC, a decimal digit
        ("cell ۱۰۲۹۱", "cell 10291"),  # Extended Arabic-Indic (Persian)
        ("cell ߁߀߂߉߁", "cell 10291"),  # N'Ko
        ("cell १०२९१", "cell 10291"),  # Devanagari
        ("why?\x00", "why?"),
        ("a\ud800b\udfffc", "abc"),  # lone surrogates
        ("line\r\nnext\rlast\tcol\x07\x1b[31m", "line\nnext\nlast\tcol[31m"),
        ("ﬁne 👨‍👩‍👧", "fine 👨‍👩‍👧"),  # the joiners of an emoji sequence stay
    ],
)
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


@given(st.text())
def test_clean_text_leaves_only_safe_text(raw: str) -> None:
    clean = clean_text(raw)
    for ch in clean:
        assert unicodedata.category(ch) not in ("Cc", "Cs") or ch in "\n\t"
        if unicodedata.decimal(ch, None) is not None:
            assert ch in "0123456789"
    assert clean_text(clean) == clean  # idempotent
    clean.encode("utf-8")  # no lone surrogates left to fail encoding


def test_the_terminal_builds_normalised_questions() -> None:
    assert question("cell ١٠٢٩١\x00").text == "cell 10291"


@pytest.mark.slow
async def test_unicode_digits_analyse_cell_10291_end_to_end(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    pool = await create_pool(database_url)
    try:
        await load_demo(pool, generate_demo(7))  # cell 10291 has an availability outage
    finally:
        await pool.close()
    asks = {
        961: "Why did traffic drop on cell １０２９１?",
        962: "Почему упал трафик на соте ١٠٢٩١?",
        963: "Why did traffic drop on cell ߁߀߂߉߁?",
    }
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        for chat, text in asks.items():
            telegram.push_message(chat, text)
        for chat in asks:
            await wait_for_replies(telegram, chat, 1, seconds=60)
    for chat in asks:
        [report] = [m for m in telegram.sent_messages(chat) if "<b>" in m.text]
        # the footer names the runbook, in the question's language
        assert "runbook" in report.text or "ранбук" in report.text, report.text
        # The outage of cell 10291, not a cell "1" (the Russian report says it in Russian).
        assert "0% vs 100%" in report.text or "0% против 100%" in report.text, report.text
    conn = await asyncpg.connect(database_url)
    try:
        stored = await conn.fetch("SELECT chat_id, question FROM messages ORDER BY chat_id")
        cells = await conn.fetch("SELECT parameters->>'cell' AS cell FROM memories")
    finally:
        await conn.close()
    assert [r["cell"] for r in cells] == ["10291"] * 3
    assert [r["question"] for r in stored] == [
        "Why did traffic drop on cell 10291?",
        "Почему упал трафик на соте 10291?",
        "Why did traffic drop on cell 10291?",
    ]


async def test_a_question_ending_in_nul_is_answered_and_stored(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.queue(Reply.json({"answer": "Canberra.", "confidence": 0.9}))
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(970, "What is the capital of Australia?\x00", username="nul\x00er")
        [sent] = await telegram.wait_for_messages(970, 1)
    assert "Canberra." in sent.text
    conn = await asyncpg.connect(database_url)
    try:
        row = await conn.fetchrow("SELECT question, answer FROM messages WHERE chat_id = 970")
        user = await conn.fetchrow("SELECT username FROM users WHERE id = 970")
    finally:
        await conn.close()
    assert row is not None and row["question"] == "What is the capital of Australia?"
    assert "Canberra." in row["answer"]
    assert user is not None and user["username"] == "nuler"
