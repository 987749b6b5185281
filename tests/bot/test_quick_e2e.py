"""Quick answers end to end: real aiogram polling the fake Telegram server, the real
openai client talking to the fake LLM, real PostgreSQL."""

from __future__ import annotations

import re

import asyncpg

from benchmarks.harness.polling_bot import quick_path_settings, running_bot
from bot.telegram.handlers.common import HELP_TEXT
from bot.telegram.replies.conversation import TYPING_DELAY_SEC
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from tests.bot.settled import inbox_settled

CHAT = 501


def _reply(answer: str, confidence: float, why: str | None = None) -> Reply:
    return Reply.json({"answer": answer, "confidence": confidence, "uncertainty_reason": why})


async def test_html_reply_with_confidence_tag(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.queue(_reply("Paris <the capital> & more", 0.9))
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "What is the capital of France?")
        [sent] = await telegram.wait_for_messages(CHAT, 1)
    assert sent.params["parse_mode"] == "HTML"
    assert "Paris &lt;the capital&gt; &amp; more" in sent.text
    assert "🟢 high confidence (0.90)" in sent.text
    assert "Unsure" not in sent.text
    assert not telegram.actions, "an answer that starts at once needs no typing action"
    assert telegram.calls_of("setMyCommands"), "the command menu is registered at start-up"


async def test_the_typing_action_shows_while_a_slow_model_works(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    async with FakeOpenAIServer(latency=TYPING_DELAY_SEC + 0.7) as slow:
        slow.queue(_reply("Paris.", 0.9))
        settings = quick_path_settings(
            database_url=database_url, telegram=telegram, llm_base_url=slow.base_url
        )
        async with running_bot(settings, telegram):
            telegram.push_message(CHAT, "What is the capital of France?")
            [sent] = await telegram.wait_for_messages(CHAT, 1)
    [typing] = telegram.actions
    assert typing.params["action"] == "typing"
    assert typing.at < sent.at, "the typing action comes before the answer"


async def test_low_confidence_reply_says_what_is_unsure(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.queue(_reply("Probably the cache.", 0.4, "I have no metrics for the cache"))
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "Is it the cache?")
        [sent] = await telegram.wait_for_messages(CHAT, 1)
    assert "🔴 low confidence (0.40)" in sent.text
    assert "Unsure: I have no metrics for the cache" in sent.text


async def test_long_answer_is_split_into_valid_html_messages(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    long_text = "\n\n".join(
        f"Paragraph {i}: " + "the <cell> & its neighbours. " * 9 for i in range(20)
    )
    assert len(long_text) >= 5000
    llm.queue(_reply(long_text, 0.85))
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "Tell me a long story")
        await telegram.wait_for(
            lambda: "confidence" in "".join(m.text for m in telegram.sent_messages(CHAT))
        )
    parts = telegram.sent_messages(CHAT)
    assert len(parts) >= 2
    # The fake rejects unbalanced HTML and texts over 4096 characters, so "ok" means valid.
    assert all(p.ok and p.params["parse_mode"] == "HTML" and len(p.text) <= 4096 for p in parts)
    assert not [c for c in telegram.calls_of("sendMessage") if not c.ok]


async def test_telegram_429_is_retried_after_retry_after(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.queue(_reply("Hello!", 0.95))
    telegram.fail_next("sendMessage", 429, retry_after=1)
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "hi")
        await telegram.wait_for_messages(CHAT, 1)
    first, second = telegram.calls_of("sendMessage")[:2]
    assert first.status == 429 and second.ok
    assert second.at - first.at >= 0.9, "the retry waited retry_after"


async def test_parse_error_falls_back_to_plain_text(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.queue(_reply("Plain fallback works", 0.9))
    telegram.fail_next("sendMessage", 400)  # "can't parse entities"
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "hi")
        [sent] = await telegram.wait_for_messages(CHAT, 1)
    assert not sent.params.get("parse_mode")
    assert "Plain fallback works" in sent.text
    assert "<i>" not in sent.text


async def test_exchanges_are_stored_and_survive_a_restart(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.queue(_reply("First answer", 0.8), _reply("Second answer", 0.7))
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "first question")
        await telegram.wait_for_messages(CHAT, 1)
    async with running_bot(settings, telegram):  # a restart: new pool, new dispatcher
        telegram.push_message(CHAT, "second question")
        await telegram.wait_for_messages(CHAT, 2)
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT question, answer, strategy, confidence, prompt_tokens, session_id"
            " FROM messages ORDER BY id"
        )
    finally:
        await conn.close()
    assert [(r["question"], r["answer"]) for r in rows] == [
        ("first question", "First answer"),
        ("second question", "Second answer"),
    ]
    assert rows[0]["strategy"] == "quick" and rows[0]["confidence"] == 0.8
    assert rows[0]["prompt_tokens"] > 0
    assert rows[0]["session_id"] == rows[1]["session_id"]
    # The second prompt carried the first exchange as history, the answer as the model is
    # asked to write it (its trailer line included).
    history = llm.requests[-1]["messages"][1:-1]
    assert {"role": "user", "content": "first question"} in history
    assert {"role": "assistant", "content": "First answer\nCONFIDENCE: 0.80 | UNSURE: -"} in (
        history
    )


async def test_without_llm_the_reply_names_the_variables(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    settings = quick_path_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "What is DNS?")
        [sent] = await telegram.wait_for_messages(CHAT, 1)
    assert "No language model is configured" in sent.text
    assert "OPENAI_API_KEY" in sent.text and "OPENAI_BASE_URL" in sent.text


async def test_llm_failing_repeatedly_gives_a_clear_error(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.script(lambda request: Reply.error(500))
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "hi")
        [sent] = await telegram.wait_for_messages(CHAT, 1, timeout=60)
    assert "couldn't answer" in sent.text and "error" in sent.text
    assert "Traceback" not in sent.text and "500" not in sent.text
    assert 2 <= llm.request_count <= 3, "retried, but boundedly"


async def test_llm_hanging_past_the_timeout_gives_a_clear_error_in_time(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.script(lambda request: Reply.hang())
    settings = quick_path_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        llm_timeout_sec=1,
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "hi")
        # The model never answers: a reply at all means the 1 s timeout cut the wait.
        [sent] = await telegram.wait_for_messages(CHAT, 1)
    assert "did not answer in time" in sent.text


async def test_llm_returning_non_json_gives_a_clear_error(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.script(lambda request: Reply.malformed())
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "hi")
        [sent] = await telegram.wait_for_messages(CHAT, 1)
    assert "unusable answer" in sent.text
    assert llm.request_count == 2, "one repair attempt, then give up"
    assert '{"answer"' not in sent.text


async def test_second_question_while_busy_is_turned_away(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    # Slower than the grace a busy chat's lock is waited for (bot/delivery/limits.py).
    llm.queue(Reply.json({"answer": "slow answer", "confidence": 0.9}, delay=3.0))
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "first, slow question")
        await telegram.wait_for(lambda: llm.request_count == 1)
        telegram.push_message(CHAT, "second question")
        await telegram.wait_for_messages(CHAT, 2)
        await inbox_settled(database_url, stored=2)
    texts = [m.text for m in telegram.sent_messages(CHAT)]
    assert any("Still working on your previous question" in t for t in texts)
    assert any("slow answer" in t for t in texts)
    assert llm.request_count == 1, "the second question was not answered on top"


def test_confidence_tag_pattern_is_documented_in_help() -> None:
    assert re.search(r"high \(≥ 0\.8\).*medium \(≥ 0\.5\)", HELP_TEXT)
