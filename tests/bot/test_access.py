"""Access control through the fake Telegram server: allowlist, bans, groups, buttons."""

from __future__ import annotations

import pytest

from benchmarks.harness.polling_bot import running_bot
from bot.access import BANNED_TEXT, STORE_DOWN_TEXT, AccessPolicy, Verdict
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from storage.admin import PgAccountStore
from storage.pool import create_pool
from tests.bot.ops_helpers import (
    ADMIN,
    GROUP,
    USER,
    execute,
    fetch,
    ops_settings,
    say,
    silence,
)

ANSWER = "This is the fake model's answer."


async def test_allowlist_refuses_politely_with_the_id_until_an_admin_allows(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    settings = ops_settings(database_url, telegram, llm.base_url, access_mode="allowlist")
    async with running_bot(settings, telegram):
        refusal = await say(telegram, USER, "what is DNS?")
        assert "invited users only" in refusal and f"<code>{USER}</code>" in refusal
        assert await say(telegram, USER, "/start") == refusal, "commands are refused too"
        assert llm.request_count == 0
        assert ANSWER in await say(telegram, ADMIN, "what is DNS?"), "admins always pass"
        assert "✅ Allowed" in await say(telegram, ADMIN, f"/allow {USER}")
        assert ANSWER in await say(telegram, USER, "what is DNS?")
        assert "Removed" in await say(telegram, ADMIN, f"/disallow {USER}")
        assert "invited users only" in await say(telegram, USER, "and now?")
    [row] = await fetch(database_url, "SELECT allowed FROM users WHERE id = $1", USER)
    assert row["allowed"] is False


async def test_open_mode_answers_anyone(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    settings = ops_settings(database_url, telegram, llm.base_url)
    async with running_bot(settings, telegram):
        assert ANSWER in await say(telegram, USER, "what is DNS?")


async def test_banned_user_gets_a_short_refusal_and_nothing_else(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    settings = ops_settings(database_url, telegram, llm.base_url)
    async with running_bot(settings, telegram):
        await say(telegram, USER, "/start")
        await execute(database_url, "UPDATE users SET status = 'banned' WHERE id = $1", USER)
        for text in ("why is the sky blue?", "/start", "/help", "/usage", "/stats"):
            assert await say(telegram, USER, text) == BANNED_TEXT
        # In a group: a refusal only when addressed, silence otherwise.
        addressed = "@whytree_test_bot why?"
        assert await say(telegram, GROUP, addressed, user_id=USER, chat_type="group") == (
            BANNED_TEXT
        )
        await silence(telegram, GROUP, "hello all", user_id=USER, chat_type="group")
        # A button press is refused with an alert.
        telegram.push_callback(USER, USER, "clar:abcdefgh:0:0", message_id=1)
        await telegram.wait_for(lambda: bool(telegram.callback_answers))
        [answer] = telegram.callback_answers
        assert answer.params["text"] == BANNED_TEXT
    assert llm.request_count == 0


@pytest.mark.parametrize("access_mode", ["open", "allowlist"])
async def test_group_rules_answer_only_when_mentioned_or_replied_to(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer, access_mode: str
) -> None:
    settings = ops_settings(database_url, telegram, llm.base_url, access_mode=access_mode)
    async with running_bot(settings, telegram):
        await silence(telegram, GROUP, "why is the sky blue?", user_id=ADMIN, chat_type="group")
        mention = "@whytree_test_bot why is the sky blue?"
        assert ANSWER in await say(telegram, GROUP, mention, user_id=ADMIN, chat_type="group")
        before = len(telegram.sent_messages(GROUP))
        telegram.push_message(
            GROUP, "and why at sunset?", user_id=ADMIN, chat_type="group", reply_to_bot=True
        )
        await telegram.wait_for_messages(GROUP, before + 1)
        assert ANSWER in telegram.sent_messages(GROUP)[-1].text
    assert llm.request_count == 2


async def test_when_the_database_is_down_only_the_allowlist_fails_closed(
    database_url: str,
) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=1)
    await pool.close()
    accounts = PgAccountStore(pool)
    admins = frozenset({ADMIN})
    open_mode = AccessPolicy(accounts=accounts, admin_ids=admins, access_mode="open")
    allowlist = AccessPolicy(accounts=accounts, admin_ids=admins, access_mode="allowlist")
    assert await open_mode.verdict(USER) == Verdict(is_admin=False)
    assert await allowlist.verdict(ADMIN) == Verdict(is_admin=True)
    assert await allowlist.verdict(USER) == Verdict(is_admin=False, refusal=STORE_DOWN_TEXT)
