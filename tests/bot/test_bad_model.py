"""A model that misbehaves in every way a real one does: the user still gets the rules' or
the runbook's answer within the deadlines, never a traceback, and the log says what the
model did. The fake OpenAI server over real HTTP plays each model."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.harness.polling_bot import harness_settings, running_bot
from demo.dataset import ExampleQuestion
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from tests.bot.replies import replies, wait_for_replies

pytestmark = pytest.mark.slow  # a bot per model, and deadlines waited out

CHAT = 1701
LLM_TIMEOUT = 3.0
#: What no reply may show: internals of a failure.
INTERNALS = ("Traceback", "Error:", "Exception", "<think>", "<html", "CONFIDENCE:")
#: The replies of a model gone wrong, and the words the log names it with.
BAD_MODELS: dict[str, tuple[Reply, str]] = {
    "html": (
        Reply.text("<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>"),
        "HTML page",
    ),
    "empty body": (Reply.text(""), "empty"),
    "think block only": (Reply.text("<think>The cell... maybe the weather? Or"), "<think>"),
    "prose after thinking": (Reply.text("<think>hmm</think> Nothing is wrong."), "prose"),
    "wrong language": (Reply.text("Das ist eine Antwort auf Deutsch, ohne JSON."), "prose"),
    "unknown tool": (Reply.tool_call("rm_rf", {"path": "/"}), "called a tool (rm_rf)"),
    "arguments off the schema": (Reply.tool_call("sql", {"qurey": 7}), "called a tool (sql)"),
    # The routing call is the one the model gets (a matching runbook plans without it): its
    # deadline, STRATEGY_TIMEOUT_SEC, ends the wait.
    "endless stream": (Reply.endless(), "timed out"),
    "30 s stall": (Reply.text('{"strategy": "deep"}', delay=30), "timed out"),
}


def _settings(database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer) -> Any:
    return harness_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        llm_timeout_sec=LLM_TIMEOUT,
        llm_max_retries=0,
        strategy_timeout_sec=2,
        # The routing call is made even for a question the rules are sure of (they would
        # not ask the model at all): here the model must be asked, and misbehave.
        strategy_rules_first=False,
    )


@pytest.mark.parametrize("name", list(BAD_MODELS))
async def test_an_incident_question_gets_the_runbook_s_answer(
    database_url: str,
    telegram: FakeTelegramServer,
    examples: dict[str, ExampleQuestion],
    caplog: pytest.LogCaptureFixture,
    name: str,
) -> None:
    reply, logged = BAD_MODELS[name]
    example = examples["technical/availability"]
    async with FakeOpenAIServer() as llm:
        llm.default = reply
        async with running_bot(_settings(database_url, telegram, llm), telegram):
            telegram.push_message(CHAT, example.en)
            await telegram.wait_for(
                lambda: any("<b>" in m.text for m in replies(telegram, CHAT)), timeout=90
            )
    shown = replies(telegram, CHAT)
    report = next(m for m in shown if "<b>" in m.text)
    assert "Primary cause" in report.text and "availability" in report.text.lower()
    for message in shown:
        assert not any(word in message.text for word in INTERNALS), message.text
    assert llm.request_count >= 1, "the model was asked, and misbehaved"
    warnings = " ".join(r.getMessage() for r in caplog.records if r.levelname == "WARNING")
    # An endless or stalled model was cut by its deadline ("timed out" in the log), not
    # waited out: an endless one never ends by itself.
    assert logged in warnings, warnings


@pytest.mark.parametrize(
    ("name", "reply"),
    [
        ("endless stream", Reply.endless()),
        ("stall mid-stream", Reply.stalled("DNS turns names into")),
        ("html", BAD_MODELS["html"][0]),
        ("think block only", BAD_MODELS["think block only"][0]),
    ],
)
async def test_a_quick_question_gets_a_clear_reply_in_time(
    database_url: str, telegram: FakeTelegramServer, name: str, reply: Reply
) -> None:
    async with FakeOpenAIServer() as llm:
        llm.default = reply
        settings = _settings(database_url, telegram, llm)
        async with running_bot(settings.model_copy(), telegram):
            telegram.push_message(CHAT, "What is DNS?")
            # An endless or stalled stream never ends by itself: a reply means it was cut.
            [answer] = await wait_for_replies(telegram, CHAT, 1, seconds=60)
    assert answer.ok and answer.text.strip()
    assert not any(word in answer.text for word in INTERNALS), answer.text
