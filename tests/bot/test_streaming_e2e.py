"""Streamed quick answers end to end: real aiogram and openai clients, the fake Telegram
and OpenAI servers over HTTP, real PostgreSQL. The model writes at a fixed token rate; the
answer grows in one Telegram message, edited at most once a second, and ends as the
final HTML answer with its confidence tag."""

from __future__ import annotations

import itertools
import json
from typing import Any

from benchmarks.harness.llm_routes import decision, is_route_and_answer_request, routed
from benchmarks.harness.polling_bot import harness_settings, running_bot
from bot.telegram.replies.streaming import EDIT_INTERVAL
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.html import parse_html
from fake_servers.telegram.server import FakeTelegramServer, RecordedCall

CHAT = 777
ANSWER = (
    "DNS, the Domain Name System, turns names such as example.org into the IP addresses "
    "computers use; resolvers ask root, TLD and authoritative servers & cache the result."
)


def _replies(telegram: FakeTelegramServer) -> list[RecordedCall]:
    return [
        c
        for c in telegram.calls
        if c.chat_id == CHAT and c.method in ("sendMessage", "editMessageText")
    ]


def _settings(database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer) -> Any:
    return harness_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        stream_replies=True,
        llm_timeout_sec=20,
    )


async def _final(telegram: FakeTelegramServer) -> RecordedCall:
    await telegram.wait_for(
        lambda: any("high confidence" in c.text for c in _replies(telegram)), timeout=20
    )
    return _replies(telegram)[-1]


async def test_quick_answer_streams_into_one_message_with_throttled_edits(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    async with FakeOpenAIServer(tokens_per_s=40) as llm:  # ~60 tokens: about 1.5 s
        llm.default = Reply.text(f"{ANSWER}\nCONFIDENCE: 0.9 | UNSURE: -")
        async with running_bot(_settings(database_url, telegram, llm), telegram):
            telegram.push_message(CHAT, "What is DNS?")
            final = await _final(telegram)
    assert llm.request_count == 1, "a definition the rules are sure of: no routing call"
    assert "response_format" not in llm.requests[0], "the answer is plain text, not JSON"
    calls = _replies(telegram)
    assert not any("CONFIDENCE" in c.text for c in calls), "the trailer line is never shown"
    assert all(c.ok for c in calls), telegram.dump()
    assert [c.method for c in calls].count("sendMessage") == 1, "one message, edited"
    streamed, last = calls[:-1], calls[-1]
    assert len(streamed) >= 2, "the answer grew in the chat before it was complete"
    texts = [c.text.removesuffix(" ▌") for c in streamed]
    assert all(ANSWER.replace("&", "&amp;").startswith(t) for t in texts)
    assert len(set(texts)) == len(texts), "never an edit that changes nothing"
    gaps = [b.at - a.at for a, b in itertools.pairwise(streamed)]
    assert all(gap >= EDIT_INTERVAL * 0.9 for gap in gaps), gaps
    assert last is final and last.method == "editMessageText"
    assert last.params["parse_mode"] == "HTML"
    plain, _ = parse_html(last.text)  # valid Telegram HTML
    assert plain.startswith(ANSWER)
    assert "🟢 high confidence (0.90)" in plain


async def test_one_call_routes_and_answers_a_likely_quick_question(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    combined = {"strategy": "quick", "answer": ANSWER, "answer_confidence": 0.9}
    combined |= {k: v for k, v in decision("quick").items() if k != "strategy"}

    def strategy(request: dict[str, Any]) -> Reply:
        assert is_route_and_answer_request(request), "no separate routing call"
        return Reply.json(combined)

    async with FakeOpenAIServer(tokens_per_s=60) as llm:
        llm.script(routed(strategy=strategy, answer=Reply.error(500)))
        async with running_bot(_settings(database_url, telegram, llm), telegram):
            telegram.push_message(CHAT, "Question 3 from chat 4567: what is DNS?")
            final = await _final(telegram)
    assert llm.request_count == 1
    assert llm.requests[0]["stream"] is True
    plain, _ = parse_html(final.text)
    assert plain.startswith(ANSWER)
    streamed = _replies(telegram)[:-1]
    assert streamed, "the answer was shown while written"
    assert all(json.dumps(combined)[:20] not in c.text for c in streamed), "no raw JSON shown"


async def test_a_server_that_cannot_stream_still_answers(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    async with FakeOpenAIServer() as llm:
        llm.refuse_streaming = True
        llm.default = Reply.json({"answer": ANSWER, "confidence": 0.9})
        async with running_bot(_settings(database_url, telegram, llm), telegram):
            telegram.push_message(CHAT, "What is DNS?")
            final = await _final(telegram)
    plain, _ = parse_html(final.text)
    assert plain.startswith(ANSWER)
    assert [bool(r.get("stream")) for r in llm.requests] == [True, False]


async def test_an_answer_that_arrives_whole_is_sent_once_not_streamed_and_edited(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    whole = f"{ANSWER}\nCONFIDENCE: 0.9 | UNSURE: -"
    async with FakeOpenAIServer() as llm:
        llm.default = Reply.text(whole, chunks=[whole])  # one chunk, as a buffering proxy sends
        async with running_bot(_settings(database_url, telegram, llm), telegram):
            telegram.push_message(CHAT, "What is DNS?")
            final = await _final(telegram)
    assert [c.method for c in _replies(telegram)] == ["sendMessage"], telegram.dump()
    plain, _ = parse_html(final.text)
    assert plain.startswith(ANSWER) and "🟢 high confidence (0.90)" in plain
