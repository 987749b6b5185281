"""Strategy selection and clarification end to end through the fake Telegram server.

Without an LLM the heuristic decides; with the fake LLM, strategy prompts and
answer prompts are scripted separately (benchmarks/harness/llm_routes.py).
"""

from __future__ import annotations

import json
from typing import Any

import asyncpg
import pytest

from benchmarks.deep_script import DeepLLMScript, ScriptedHypothesis
from benchmarks.harness.llm_routes import (
    decision,
    is_planner_request,
    is_strategy_request,
    routed,
    strategy_requests,
)
from benchmarks.harness.polling_bot import harness_settings, running_bot
from bot.config import Settings
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer, RecordedCall
from tests.bot.replies import buttons, next_reply, wait_for_replies
from tests.bot.settled import inbox_settled

CHAT = 701
USER = 701
VAGUE = "something is wrong again, why?"


async def _next_message(telegram: FakeTelegramServer, chat_id: int = CHAT) -> RecordedCall:
    return await next_reply(telegram, chat_id)


async def _clarifications(database_url: str) -> list[dict[str, Any]]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch("SELECT * FROM clarifications ORDER BY created_at")
    finally:
        await conn.close()
    return [{**row, "answers": json.loads(row["answers"])} for row in rows]


def _no_llm(database_url: str, telegram: FakeTelegramServer) -> Settings:
    return harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)


async def test_buttons_then_typed_answer_resume_the_reasoning(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    async with running_bot(_no_llm(database_url, telegram), telegram):
        asking = _next_message(telegram)
        telegram.push_message(CHAT, VAGUE, user_id=USER)
        first = await asking
        assert first.text.startswith("❓") and "What should I look at?" in first.text
        options = buttons(first)
        assert options[-1][0].startswith("✍️"), "a way to type one's own answer"
        assert all(len(data.encode()) <= 64 for _, data in options)
        assert all(data.startswith("clar:") for _, data in options)

        asking = _next_message(telegram)
        telegram.push_callback(CHAT, USER, options[0][1], first.result["message_id"])
        second = await asking
        assert second.text.startswith("❓") and "What should I look at?" not in second.text
        assert telegram.callback_answers[-1].params.get("text", "").startswith("→")
        assert telegram.calls_of("editMessageReplyMarkup"), "the used keyboard is removed"

        asking = _next_message(telegram)
        telegram.push_message(CHAT, "cell 12345, since Monday", user_id=USER)
        final = await asking
    assert "deep analysis" in final.text and "confidence" in final.text
    [row] = await _clarifications(database_url)
    assert row["status"] == "answered" and row["round"] == 1
    assert row["answers"][1] == "cell 12345, since Monday"


async def test_two_rounds_then_the_answer_states_its_assumptions(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    async with running_bot(_no_llm(database_url, telegram), telegram):
        telegram.push_message(CHAT, VAGUE, user_id=USER)
        answered = await wait_for_replies(telegram, CHAT, 1)
        for _ in range(6):  # answer whatever is asked, vaguely, until it stops asking
            if not answered[-1].text.startswith("❓"):
                break
            count = len(answered)
            telegram.push_message(CHAT, "not sure", user_id=USER)
            answered = await wait_for_replies(telegram, CHAT, count + 1, seconds=60)
    final = answered[-1]
    assert not final.text.startswith("❓")
    assert "Assumptions" in final.text and "not sure" in final.text
    assert "Unsure" in final.text
    [row] = await _clarifications(database_url)
    assert row["round"] == 2 and row["status"] == "answered"


async def test_other_users_forged_and_stale_buttons_change_nothing(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    group = -100701
    async with running_bot(_no_llm(database_url, telegram), telegram):
        telegram.push_message(group, f"@whytree_test_bot {VAGUE}", chat_type="group", user_id=USER)
        [asked] = await telegram.wait_for_messages(group, 1)
        data = buttons(asked)[0][1]
        message_id = asked.result["message_id"]
        cid = data.split(":")[1]
        for user, payload in [
            (USER + 1, data),  # another user's press
            (USER, f"clar:{'Z' * len(cid)}:0:0"),  # an unknown id
            (USER, "clar:broken"),  # malformed
            (USER, "something-else"),  # not ours at all
            (USER, f"clar:{cid}:5:0"),  # a question that is not current
        ]:
            telegram.push_callback(group, user, payload, message_id)
        await telegram.wait_for(lambda: len(telegram.callback_answers) == 5)
        await inbox_settled(database_url, stored=len(telegram.pushed))
    # Updates are handled concurrently, so the notices may come back in any order.
    notices = sorted(c.params.get("text", "") for c in telegram.callback_answers)
    assert notices == sorted(
        ["This question was asked to someone else.", "That question was already answered."]
        + ["This button is no longer valid."] * 3
    )
    assert len(telegram.sent_messages(group)) == 1
    [row] = await _clarifications(database_url)
    assert row["status"] == "active" and not row["answers"]


async def test_expired_clarification_and_cancel(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    async with running_bot(_no_llm(database_url, telegram), telegram) as running:
        telegram.push_message(CHAT, VAGUE, user_id=USER)
        [asked] = await telegram.wait_for_messages(CHAT, 1)
        await running.runtime.pool.execute(
            "UPDATE clarifications SET expires_at = now() - interval '1 second'"
        )
        telegram.push_callback(CHAT, USER, buttons(asked)[0][1], asked.result["message_id"])
        await telegram.wait_for(lambda: len(telegram.callback_answers) == 1)
        assert telegram.callback_answers[0].params["text"].startswith("This question has expired")

        asking = _next_message(telegram)
        telegram.push_message(CHAT, VAGUE, user_id=USER)  # a new question, not an answer
        assert (await asking).text.startswith("❓")
        asking = _next_message(telegram)
        telegram.push_message(CHAT, "/cancel", user_id=USER)
        assert (await asking).text.startswith("Cancelled")
        asking = _next_message(telegram)
        telegram.push_message(CHAT, "/cancel", user_id=USER)
        assert "no pending question" in (await asking).text
    statuses = [r["status"] for r in await _clarifications(database_url)]
    assert statuses == ["superseded", "cancelled"]  # the newest wins; /cancel closed it
    assert not (await _clarifications(database_url))[0]["answers"]


async def test_a_restart_between_question_and_answer(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    settings = _no_llm(database_url, telegram)
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, VAGUE, user_id=USER)
        await telegram.wait_for_messages(CHAT, 1)
    async with running_bot(settings, telegram):  # a new process, same database
        asking = _next_message(telegram)
        telegram.push_message(CHAT, "cell 12345", user_id=USER)
        assert "What exactly looks wrong?" in (await asking).text


async def test_llm_decisions_decline_deep_and_clarify(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    # "it's broken again" first: after the checkout question the rules would take "again"
    # for checkout, and a model's "which service?" would not be followed.
    verdicts = {
        "it's broken again": decision(
            "clarify",
            questions=[{"text": "Which service?", "options": ["checkout", "payments"]}],
        ),
        "please wipe the prod database": decision("decline", reason="I only read data."),
        "why is checkout failing with 5xx?": decision("deep"),
    }

    def strategy(request: dict[str, Any]) -> dict[str, Any]:
        message = str(request["messages"][-1]["content"]).split("<message>")[-1]
        return next(v for q, v in verdicts.items() if q in message)

    planner = DeepLLMScript(
        hypotheses=[ScriptedHypothesis(key="deploy", title="A bad deploy of checkout")],
        primary="deploy",
    )
    quick = {"answer": "Quick take.", "confidence": 0.8}
    llm.script(routed(strategy=strategy, answer=quick, deep=planner))
    settings = harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        replies = []
        for question in verdicts:
            asking = _next_message(telegram)
            telegram.push_message(CHAT, question, user_id=USER)
            replies.append(await asking)
    clarify, decline, deep = replies
    # a decline is the rules' call: the model is not asked, its reason is not shown
    assert "I only read data; I can't change" in decline.text
    routed_messages = [
        str(r["messages"][-1]["content"]).split("<message>")[-1]
        for r in llm.requests
        if is_strategy_request(r)
    ]
    assert not any("wipe the prod" in m for m in routed_messages)
    assert "Deep analysis" in deep.text and "A bad deploy of checkout" in deep.text
    assert planner.calls["hypotheses"] == 1
    assert [t for t, _ in buttons(clarify)][:2] == ["checkout", "payments"]
    quick_calls = [
        r for r in llm.requests if not is_strategy_request(r) and not is_planner_request(r)
    ]
    assert not quick_calls, "decline and clarify make no LLM call beyond the strategy decision"


@pytest.mark.parametrize("failure", [Reply.error(500), Reply.hang()])
async def test_strategy_llm_failure_falls_back_to_the_heuristic(
    database_url: str,
    telegram: FakeTelegramServer,
    llm: FakeOpenAIServer,
    failure: Reply,
    caplog: pytest.LogCaptureFixture,
) -> None:
    llm.script(routed(strategy=failure, answer={"answer": "still answered", "confidence": 0.9}))
    settings = harness_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        strategy_timeout_sec=1,
        llm_timeout_sec=3,
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "why is it failing with 5xx?", user_id=USER)
        [reply] = await telegram.wait_for_messages(CHAT, 1, timeout=60)
    assert reply.text.startswith("❓")  # the rules ask for what is missing
    assert "using the heuristic" in caplog.text


async def test_strategy_cache_hit_skips_the_llm(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.script(
        routed(strategy=decision("quick"), answer={"answer": "DNS maps names.", "confidence": 0.9})
    )
    settings = harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        for count in (1, 2):
            # Not a definition the rules are sure of: the model routes it.
            telegram.push_message(CHAT, "Tell me about DNS resolvers", user_id=USER)
            await telegram.wait_for_messages(CHAT, count)
    assert strategy_requests(llm.requests) == 1
