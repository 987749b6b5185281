"""Rate limits and budgets: the window and slots alone, then the replies through Telegram."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import asyncpg

from benchmarks.harness.polling_bot import running_bot
from bot.delivery.limits import LeasedChatLocks, LeasedDeepSlots, SharedWindow
from bot.wording import budget_text, rate_limit_text
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from reasoning_core.answers.fixed import deep_busy_answer
from reasoning_core.models import StrategyDecision
from storage.leases import PgLeases, PgRateHits
from tests.bot.ops_helpers import USER, fetch, ops_settings, say


async def test_the_window_counts_the_last_minute_per_user(pool: asyncpg.Pool[Any]) -> None:
    window = SharedWindow(PgRateHits(pool), limit=3)
    for _ in range(3):
        assert await window.check(1) == 0.0
    wait = await window.check(1)
    assert 59 < wait <= 60, "the oldest hit leaves the window in a minute"
    assert await window.check(2) == 0.0, "other users are not affected"
    short = SharedWindow(PgRateHits(pool), limit=1, window_sec=1.0)
    assert await short.check(3) == 0.0
    assert 0 < await short.check(3) <= 1.0
    # Refused checks are not recorded: the first hit leaves the window and a check passes
    # again (polled; were refusals recorded, the window would never empty).
    for _ in range(400):
        if await short.check(3) == 0.0:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the first hit never left the window")
    assert await short.check(3) > 0, "the hit that passed was recorded"


async def test_the_window_zero_means_unlimited(pool: asyncpg.Pool[Any]) -> None:
    window = SharedWindow(PgRateHits(pool), limit=0)
    assert all([await window.check(1) == 0.0 for _ in range(100)])


async def test_a_chat_lock_freed_moments_later_is_waited_for(pool: asyncpg.Pool[Any]) -> None:
    """The previous question's lock goes with its outcome, just after its reply: a message
    sent right after that reply waits those moments rather than hearing "still working"."""
    leases = PgLeases(pool)
    locks = LeasedChatLocks(leases, ttl_sec=60, grace_sec=(0.05, 0.1, 0.2, 0.4))
    assert await leases.acquire("chat", "77", "previous", limit=1, ttl_sec=60)

    async def outcome_recorded() -> None:
        await asyncio.sleep(0.2)
        await leases.release("chat", "77", "previous")

    release = asyncio.create_task(outcome_recorded())
    async with locks.claim(77) as claimed:
        assert claimed, "the lock freed within the grace was taken"
    await release
    assert await leases.acquire("chat", "77", "busy", limit=1, ttl_sec=60)
    async with locks.claim(77) as claimed:
        assert not claimed, "a chat still busy after the grace is turned away"


async def test_deep_slots_limit_per_user_and_release(pool: asyncpg.Pool[Any]) -> None:
    slots = LeasedDeepSlots(PgLeases(pool), limit=2, ttl_sec=60)
    async with slots.slot(1) as first, slots.slot(1) as second:
        assert first and second
        async with slots.slot(1) as third, slots.slot(2) as other:
            assert not third and other
            assert slots.running(1) == 2 and slots.running() == 3
    assert slots.running() == 0
    async with slots.slot(1) as again:
        assert again


async def test_deep_slot_is_released_when_the_analysis_fails(pool: asyncpg.Pool[Any]) -> None:
    slots = LeasedDeepSlots(PgLeases(pool), limit=1, ttl_sec=60)

    async def failing() -> None:
        async with slots.slot(1) as acquired:
            assert acquired
            raise RuntimeError("boom")

    results = await asyncio.gather(failing(), return_exceptions=True)
    assert isinstance(results[0], RuntimeError)
    assert slots.running(1) == 0
    async with slots.slot(1) as again:
        assert again, "the lease was released, not left to run out"


def test_refusal_texts_say_when_to_ask_again() -> None:
    assert "in 13 s" in rate_limit_text(5, 12.2)
    late = datetime(2025, 3, 1, 21, 30, tzinfo=UTC)
    text = budget_text(1200, 1000, late)
    assert "1,200 of 1,000 tokens" in text and "in 2 h 30 min" in text
    assert "in 1 min" in budget_text(5, 5, datetime(2025, 3, 1, 23, 59, 30, tzinfo=UTC))
    decision = StrategyDecision(strategy="deep", confidence=0.7, reason="why")
    assert "as soon as it finishes" in deep_busy_answer(1, decision).text


async def test_over_the_rate_limit_the_user_is_told_when_to_ask_again(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    settings = ops_settings(database_url, telegram, llm.base_url, rate_limit_per_min=2)
    async with running_bot(settings, telegram):
        assert "fake model" in await say(telegram, USER, "one?")
        assert "fake model" in await say(telegram, USER, "two?")
        refusal = await say(telegram, USER, "three?")
        assert "more than 2 questions a minute" in refusal
        assert "You can ask again in" in refusal
        seconds = int(refusal.split("again in ")[1].split(" s")[0])
        assert 0 < seconds <= 60  # what is left of the minute since the first question
        assert "fake model" in await say(telegram, USER + 1, "another user?")
        assert "/usage" not in refusal
        assert "Your token usage" in await say(telegram, USER, "/usage"), "commands still work"
    assert llm.request_count == 3


async def test_over_the_daily_budget_the_user_is_told_and_usage_is_recorded(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.default = replace(Reply.json({"answer": "costly", "confidence": 0.9}), usage=(40, 20))
    settings = ops_settings(database_url, telegram, llm.base_url, user_daily_token_budget=100)
    async with running_bot(settings, telegram):
        assert "costly" in await say(telegram, USER, "one?")
        assert "costly" in await say(telegram, USER, "two?")  # 60 used: under 100
        refusal = await say(telegram, USER, "three?")
        assert "today's token budget (120 of 100 tokens)" in refusal
        assert "after midnight UTC" in refusal
        usage = await say(telegram, USER, "/usage")
        assert "120 tokens (80 prompt + 40 completion, 2 LLM calls)" in usage
        assert "Daily budget: 100 tokens; 0 left today." in usage
    assert llm.request_count == 2
    [row] = await fetch(
        database_url,
        "SELECT prompt_tokens, completion_tokens, llm_calls FROM usage_days WHERE user_id = $1",
        USER,
    )
    assert tuple(row) == (80, 40, 2)


async def test_usage_without_budget_or_questions(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    settings = ops_settings(database_url, telegram, llm.base_url)
    async with running_bot(settings, telegram):
        text = await say(telegram, USER, "/usage")
    assert "No tokens used in the last 7 days." in text
    assert "There is no daily token budget." in text
