"""Every kind of odd input gets a clear reply or a deliberate silence, never a traceback."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from benchmarks.harness.polling_bot import RunningBot, quick_path_settings, running_bot
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from fake_servers.telegram.updates import Content
from tests.bot.settled import inbox_settled

CHAT = 601
GROUP = -100601


@pytest.fixture
async def bot(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> AsyncIterator[RunningBot]:
    llm.script(lambda request: Reply.json({"answer": "an answer", "confidence": 0.9}))
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram) as running:
        yield running


async def _only_reply(telegram: FakeTelegramServer, chat_id: int) -> str:
    [sent] = await telegram.wait_for_messages(chat_id, 1)
    return sent.text


async def _no_traceback(telegram: FakeTelegramServer) -> None:
    assert not any("Traceback" in m.text for m in telegram.sent_messages())


async def test_empty_text_asks_for_a_question(
    bot: RunningBot, telegram: FakeTelegramServer
) -> None:
    telegram.push_message(CHAT, "   ")
    assert "type your question" in await _only_reply(telegram, CHAT)


async def test_ten_thousand_characters_are_refused_politely(
    bot: RunningBot, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    telegram.push_message(CHAT, "why" + "?" * 9997)
    text = await _only_reply(telegram, CHAT)
    assert "10,000 characters" in text and "4,000" in text
    assert llm.request_count == 0


@pytest.mark.parametrize("content", ["sticker", "photo", "document"])
async def test_non_text_content_gets_a_clear_reply(
    bot: RunningBot, telegram: FakeTelegramServer, content: Content
) -> None:
    telegram.push_message(CHAT, None, content=content)
    assert "only read text" in await _only_reply(telegram, CHAT)


async def test_unknown_command_points_to_help(
    bot: RunningBot, telegram: FakeTelegramServer
) -> None:
    telegram.push_message(CHAT, "/frobnicate now")
    assert "/help" in await _only_reply(telegram, CHAT)


async def test_edited_message_is_explained_not_answered(
    bot: RunningBot, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    telegram.push_message(CHAT, "why is it slow?", edited=True)
    assert "edited" in await _only_reply(telegram, CHAT)
    assert llm.request_count == 0


async def test_group_messages_need_a_mention_or_a_reply(
    bot: RunningBot, telegram: FakeTelegramServer, llm: FakeOpenAIServer, database_url: str
) -> None:
    telegram.push_message(GROUP, "chatting among ourselves", chat_type="supergroup", user_id=7)
    telegram.push_message(GROUP, None, chat_type="supergroup", user_id=7, content="sticker")
    telegram.push_message(GROUP, "/frobnicate", chat_type="supergroup", user_id=7)
    telegram.push_message(
        GROUP, "@whytree_test_bot what is DNS?", chat_type="supergroup", user_id=7
    )
    [answer] = await telegram.wait_for_messages(GROUP, 1)
    assert "an answer" in answer.text
    assert "@whytree_test_bot" not in str(llm.requests[-1]["messages"][-1])
    telegram.push_message(GROUP, "and IPv6?", chat_type="supergroup", user_id=8, reply_to_bot=True)
    await telegram.wait_for_messages(GROUP, 2)
    await inbox_settled(database_url, stored=len(telegram.pushed))  # nothing else follows
    assert len(telegram.sent_messages(GROUP)) == 2, telegram.dump()
    assert llm.request_count == 2


async def test_start_help_and_new(bot: RunningBot, telegram: FakeTelegramServer) -> None:
    telegram.push_message(CHAT, "/start")
    telegram.push_message(CHAT, "/help")
    telegram.push_message(CHAT, "/new")
    # Updates are handled concurrently: the three replies may arrive in any order.
    texts = [m.text for m in await telegram.wait_for_messages(CHAT, 3)]
    assert any("I'm <b>whytree</b>" in t for t in texts), texts
    assert any("/new" in t and "confidence" in t for t in texts), texts
    assert any("New session" in t for t in texts), texts
    sessions = await bot.runtime.pool.fetch(
        "SELECT ended_at FROM sessions WHERE chat_id = $1 ORDER BY id", CHAT
    )
    assert len(sessions) == 1 and sessions[0]["ended_at"] is None
    await _no_traceback(telegram)


async def test_new_session_drops_the_history_from_prompts(
    bot: RunningBot, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    telegram.push_message(CHAT, "remember the word pineapple")
    await telegram.wait_for_messages(CHAT, 1)
    telegram.push_message(CHAT, "/new")
    await telegram.wait_for_messages(CHAT, 2)
    telegram.push_message(CHAT, "what was the word?")
    await telegram.wait_for_messages(CHAT, 3)
    messages = llm.requests[-1]["messages"]
    turns = [m for m in messages if m["role"] in {"user", "assistant"}]
    # No earlier turns of the old session; long-term memory (a system note) may remain.
    assert [m["content"] for m in turns] == ["what was the word?"]


async def test_a_database_outage_leaves_the_update_with_telegram(
    bot: RunningBot, telegram: FakeTelegramServer
) -> None:
    """Nothing can be stored, so nothing is acknowledged: Telegram keeps the update (it is
    answered once the database is back — tests/bot/test_delivery.py)."""
    await bot.runtime.pool.close()  # the database goes away under a running bot
    update_id = telegram.push_message(CHAT, "are you there?")
    # Read, failed to store, and so read again: it was not acknowledged the first time.
    await telegram.wait_for(lambda: telegram.served(update_id) >= 3, timeout=60)
    assert not telegram.sent_messages(CHAT)
    assert any(u["update_id"] == update_id for u in telegram._updates)  # not confirmed
    polls = [c for c in telegram.calls_of("getUpdates") if c.ok]
    assert all((c.params.get("offset") or 0) <= update_id for c in polls)
