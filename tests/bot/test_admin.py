"""Admin commands through the fake Telegram server: as admin, as non-admin, bad input, audit."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from benchmarks.harness.polling_bot import RunningBot, running_bot
from bot.http_api import create_key, hash_key
from bot.telegram.handlers.common import HELP_TEXT
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from storage.api_keys import PgApiKeyStore
from tests.bot.ops_helpers import (
    ADMIN,
    GROUP,
    OTHER_ADMIN,
    UNKNOWN_COMMAND,
    USER,
    execute,
    fetch,
    ops_settings,
    say,
    silence,
)

ADMIN_COMMANDS = [
    "/stats",
    "/stats 7d",
    "/users",
    "/users 2",
    f"/user {ADMIN}",
    f"/ban {OTHER_ADMIN}",
    f"/unban {ADMIN}",
    f"/allow {USER}",
    f"/disallow {USER}",
    "/trees",
    "/trees 5",
    "/tree t1",
    "/revoke_links t1",
    "/health",
    "/runbooks",
    "/reload_runbooks",
    "/audit",
    "/audit 3",
    "/apikeys",
    "/apikey_revoke nope",
]


@pytest.fixture
async def bot(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> AsyncIterator[RunningBot]:
    settings = ops_settings(database_url, telegram, llm.base_url)
    async with running_bot(settings, telegram) as running:
        await say(telegram, USER, "/start")  # the user exists from now on
        yield running


async def test_non_admins_see_admin_commands_as_unknown(
    bot: RunningBot, telegram: FakeTelegramServer, database_url: str
) -> None:
    for command in ADMIN_COMMANDS:
        assert await say(telegram, USER, command) == UNKNOWN_COMMAND, command
    assert await fetch(database_url, "SELECT * FROM audit_entries") == []
    changed = "SELECT id FROM users WHERE status <> 'active' OR allowed OR role <> 'user'"
    assert await fetch(database_url, changed) == [], "nothing was changed"
    help_text = await say(telegram, USER, "/help")
    assert "Admin commands" not in help_text and "/ban" not in help_text


async def test_every_admin_command_answers_an_admin_and_is_audited(
    bot: RunningBot, telegram: FakeTelegramServer, database_url: str
) -> None:
    replies = {command: await say(telegram, ADMIN, command) for command in ADMIN_COMMANDS}
    assert all(UNKNOWN_COMMAND not in r for r in replies.values()), replies
    assert "Stats, last 24h" in replies["/stats"] and "Stats, last 7d" in replies["/stats 7d"]
    assert "page 1 of 1" in replies["/users"] and "Page 2 doesn't exist" in replies["/users 2"]
    assert "Role: admin (ADMIN_IDS)" in replies[f"/user {ADMIN}"]
    assert "admins can't ban other admins" in replies[f"/ban {OTHER_ADMIN}"]
    assert "is not banned" in replies[f"/unban {ADMIN}"]
    assert "✅ Allowed" in replies[f"/allow {USER}"]
    assert "Removed from the allowlist" in replies[f"/disallow {USER}"]
    assert "No analyses yet" in replies["/trees"]
    assert "No tree with id" in replies["/tree t1"]
    assert "Revoked 0 link(s)" in replies["/revoke_links t1"]
    assert "Database: ✅" in replies["/health"] and "LLM: ✅" in replies["/health"]
    assert "Version:" in replies["/health"] and "uptime" in replies["/health"]
    assert "cell_traffic_drop" in replies["/runbooks"]
    assert "Runbooks reloaded" in replies["/reload_runbooks"]
    assert "/allow" in replies["/audit"] and "/ban" in replies["/audit"]

    rows = await fetch(
        database_url,
        "SELECT admin_id, chat_id, action, args, outcome FROM audit_entries ORDER BY id",
    )
    audited = [f"/{r['action']} {r['args']}".strip() for r in rows]
    assert audited == ADMIN_COMMANDS
    assert {r["admin_id"] for r in rows} == {ADMIN} and {r["chat_id"] for r in rows} == {ADMIN}
    by_action = {r["action"]: r["outcome"] for r in rows}
    assert by_action["allow"] == f"allowed {USER}"
    assert by_action["ban"].startswith("refused: ") and "admin" in by_action["ban"]


async def test_ban_and_unban_with_reason(
    bot: RunningBot, telegram: FakeTelegramServer, database_url: str, llm: FakeOpenAIServer
) -> None:
    reply = await say(telegram, ADMIN, f"/ban {USER} spamming <the> channel")
    assert f"Banned <code>{USER}</code>" in reply and "spamming &lt;the&gt; channel" in reply
    assert (
        await say(telegram, USER, "why is the sky blue?")
        == "⛔ You are banned from using this bot."
    )
    assert llm.request_count == 0
    detail = await say(telegram, ADMIN, f"/user {USER}")
    assert "Status: banned since" in detail and "spamming" in detail
    assert "already banned" in await say(telegram, ADMIN, f"/ban {USER}")
    assert "Unbanned" in await say(telegram, ADMIN, f"/unban {USER}")
    assert "fake model's answer" in await say(telegram, USER, "why is the sky blue?")
    [row] = await fetch(database_url, "SELECT status, ban_reason FROM users WHERE id = $1", USER)
    assert (row["status"], row["ban_reason"]) == ("active", None)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("/user", "Which user? Usage: <code>/user ID</code>"),
        ("/user abc", "“abc” is not a user id"),
        ("/user -5", "“-5” is not a user id"),
        ("/user 99999999999999999999999", "is not a user id"),
        ("/user 424242", "No user with id <code>424242</code> has written to me yet."),
        ("/ban", "Which user? Usage: <code>/ban ID [reason]</code>"),
        ("/ban 424242 spam", "No user with id <code>424242</code>"),
        (f"/ban {ADMIN}", "You can't ban yourself."),
        (f"/ban {OTHER_ADMIN}", "admins can't ban other admins"),
        ("/unban x1", "“x1” is not a user id"),
        ("/allow", "Which user?"),
        ("/disallow 424242", "No user with id"),
        (f"/disallow {OTHER_ADMIN}", "admins always have access"),
        ("/users 0", "pages start at 1"),
        ("/users two", "“two” is not a page number"),
        ("/users 99999999999999999999999999999999", "doesn't exist: there is 1 page"),
        ("/trees many", "“many” is not a positive number"),
        ("/audit 0", "“0” is not a positive number"),
        ("/stats 1y", "Unknown period “1y”. Usage: /stats [24h|7d|30d]"),
        ("/tree", "Which tree?"),
        ("/tree ../../etc/passwd", "is not a tree id"),
        ("/tree nosuchtree", "No tree with id <code>nosuchtree</code>"),
        ("/revoke_links", "Which tree? Usage: <code>/revoke_links ID</code>"),
        ("/revoke_links <b>x</b>", "is not a tree id"),
    ],
)
async def test_bad_arguments_get_a_clear_reply(
    bot: RunningBot, telegram: FakeTelegramServer, database_url: str, command: str, expected: str
) -> None:
    if command.startswith(("/ban", "/disallow")) and str(OTHER_ADMIN) in command:
        await say(telegram, OTHER_ADMIN, "/start")  # the other admin has written to the bot
    reply = await say(telegram, ADMIN, command)
    assert expected in reply, reply
    assert "Traceback" not in reply
    [row] = await fetch(database_url, "SELECT outcome FROM audit_entries ORDER BY id DESC LIMIT 1")
    assert row["outcome"].startswith("refused: ")


async def test_trees_and_tree_render_a_stored_analysis(
    bot: RunningBot, telegram: FakeTelegramServer, database_url: str
) -> None:
    synthesis = {"primary": {"id": "h1", "title": "Availability outage", "confidence": 0.86},
                 "confidence": 0.86}  # fmt: skip
    await execute(
        database_url,
        """INSERT INTO trees (id, task, status, synthesis)
           VALUES ('t-42', 'Why did traffic drop on cell 12345?', 'completed', $1::jsonb)""",
        json.dumps(synthesis),
    )
    await execute(
        database_url,
        """INSERT INTO tree_nodes
               (tree_id, id, parent_id, node_type, status, title, depth, prior, promise)
           VALUES ('t-42', 'root', NULL, 'root', 'completed', 'Why the drop?', 0, 0.5, 0.5),
                  ('t-42', 'h1', 'root', 'hypothesis', 'completed', 'Availability outage',
                   1, 0.5, 0.5)""",
    )
    listing = await say(telegram, ADMIN, "/trees")
    assert "<code>t-42</code>" in listing and "Availability outage · 0.86" in listing
    tree = await say(telegram, ADMIN, "/tree t-42")
    assert "Primary cause: Availability outage · 0.86" in tree
    assert "<pre>" in tree and "h1 Availability outage" in tree


async def test_admin_help_lists_admin_commands(
    bot: RunningBot, telegram: FakeTelegramServer
) -> None:
    text = await say(telegram, ADMIN, "/help")
    assert text.startswith(HELP_TEXT[:40])
    assert "Admin commands" in text and "/ban ID [reason]" in text and "/audit [n]" in text


async def test_a_banned_admin_in_admin_ids_stays_admin(
    bot: RunningBot,
    telegram: FakeTelegramServer,
    database_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await say(telegram, ADMIN, "/start")
    await execute(database_url, "UPDATE users SET status = 'banned' WHERE id = $1", ADMIN)
    assert "Database: ✅" in await say(telegram, ADMIN, "/health")
    assert any("config wins" in r.getMessage() for r in caplog.records)


async def test_a_database_admin_role_counts(
    bot: RunningBot, telegram: FakeTelegramServer, database_url: str
) -> None:
    await execute(database_url, "UPDATE users SET role = 'admin' WHERE id = $1", USER)
    assert "Stats, last 24h" in await say(telegram, USER, "/stats")


async def test_admins_ban_from_a_group_and_others_are_ignored_there(
    bot: RunningBot, telegram: FakeTelegramServer, database_url: str
) -> None:
    await silence(telegram, GROUP, f"/ban {ADMIN}", user_id=USER, chat_type="group")
    reply = await say(telegram, GROUP, f"/ban {USER} flooding", user_id=ADMIN, chat_type="group")
    assert f"Banned <code>{USER}</code>" in reply
    mention = await say(telegram, GROUP, "@whytree_test_bot why?", user_id=USER, chat_type="group")
    assert mention == "⛔ You are banned from using this bot."
    await silence(telegram, GROUP, "just chatting", user_id=USER, chat_type="group")
    [row] = await fetch(database_url, "SELECT chat_id FROM audit_entries WHERE action = 'ban'")
    assert row["chat_id"] == GROUP


async def test_stats_and_user_report_real_numbers_after_questions(
    bot: RunningBot, telegram: FakeTelegramServer
) -> None:
    for question in ("what is DNS?", "what is TCP?"):
        assert "fake model" in await say(telegram, USER, question)
    stats = await say(telegram, ADMIN, "/stats")
    assert "Questions: 2 · below 0.7: 0 (0%) · active users: 1" in stats
    assert "• quick: 2 · mean confidence 0.90" in stats and "median" in stats
    assert "LLM: 2 calls" in stats
    user = await say(telegram, ADMIN, f"/user {USER}")
    assert "Questions: 2" in user and "in 2 LLM calls" in user
    assert "Tokens today: 0" not in user


async def test_api_keys_are_listed_without_the_key_and_revoked(
    bot: RunningBot, telegram: FakeTelegramServer
) -> None:
    store = PgApiKeyStore(bot.runtime.pool)
    _, secret = await create_key(store, "grafana", user_id=USER, rate_limit_per_min=30)
    listed = await say(telegram, ADMIN, "/apikeys")
    assert "grafana" in listed and f"user {USER}" in listed and "30/min" in listed
    assert secret not in listed and secret[:12] not in listed
    assert "is revoked" in await say(telegram, ADMIN, "/apikey_revoke grafana")
    assert await store.by_hash(hash_key(secret)) is None
    assert "No live key" in await say(telegram, ADMIN, "/apikey_revoke grafana")
