"""What one quick question costs: model calls at the fake OpenAI server and PostgreSQL
round trips seen by asyncpg's query logger, through the real bot end to end."""

from __future__ import annotations

import time
from typing import Any

import asyncpg

from tests.fakes.bot_harness import harness_settings, running_bot
from tests.fakes.openai_replies import Reply
from tests.fakes.openai_server import DEFAULT_REPLY, FakeOpenAIServer
from tests.fakes.telegram_server import FakeTelegramServer

CHAT = 4242


async def test_a_quick_question_costs_one_model_call_and_few_round_trips(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    statements: list[tuple[float, str]] = []
    model_calls: list[float] = []

    def observe(query: asyncpg.connection.LoggedQuery) -> None:
        statements.append((time.monotonic(), " ".join(query.query.split())[:90]))

    def answer(request: dict[str, Any]) -> Reply:
        model_calls.append(time.monotonic())
        return DEFAULT_REPLY

    async with FakeOpenAIServer() as llm:
        llm.script(answer)
        settings = harness_settings(
            database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
        )
        async with running_bot(settings, telegram, observe=observe):
            telegram.push_message(CHAT, "hello there")  # the first message creates the user
            await telegram.wait_for_messages(CHAT, 1)
            await telegram.wait_for(lambda: len(statements) > 0)
            statements.clear()
            model_calls.clear()
            telegram.push_message(CHAT, "What is DNS?")
            await telegram.wait_for_messages(CHAT, 2)
    assert len(model_calls) == 1, "a definition the rules are sure of: one model call"
    before = [q for at, q in statements if at < model_calls[0]]
    after = [q for at, q in statements if at >= model_calls[0]]
    # Before: the user (access check), the turn (project, session, history, pending
    # clarification: one statement), the memory recall.
    assert len(before) <= 3, before
    # After: the token usage, then the exchange and its memory entry in one statement.
    assert len(after) <= 2, after
    assert not any("pg_advisory_unlock_all" in q for q in statements), "no reset per release"
    conn = await asyncpg.connect(database_url)
    try:
        stored = await conn.fetchval("SELECT count(*) FROM messages WHERE chat_id = $1", CHAT)
        remembered = await conn.fetchval(
            "SELECT count(*) FROM memories WHERE chat_id = $1 AND goal_summary LIKE '%DNS%'", CHAT
        )
    finally:
        await conn.close()
    assert stored == 2, "both exchanges are stored"
    assert remembered == 1, "the answer is remembered"
