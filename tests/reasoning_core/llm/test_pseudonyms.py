"""LLM_PSEUDONYMIZE: names never reach the model, and its answer gets them back.

Through the real adapter and the fake OpenAI server over HTTP; the fake model echoes the
placeholders it was sent, so the restoring is seen in every answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.llm.pseudonyms import PseudonymizingChatModel, begin_question
from reasoning_core.llm.streaming import complete_streamed
from reasoning_core.ports import ChatMessage, ToolCall

REAL = ["10291", "S1040", "db1.corp.local", "10.1.2.3", "ops@example.org", "fe80::1:2:3"]
QUESTION = (
    "Why did traffic drop on cell 10291 at site S1040? db1.corp.local (10.1.2.3, "
    "fe80::1:2:3) logs it; mail ops@example.org. Cell 10291 again."
)
PLACEHOLDER = re.compile(r"\b[A-Z]+_\d+\b")


def _echo(request: dict[str, Any]) -> Reply:
    """The fake model names back every placeholder it was given, in order."""
    seen = PLACEHOLDER.findall(json.dumps(request["messages"]))
    return Reply.text("It is " + ", ".join(dict.fromkeys(seen)) + ".")


async def test_names_are_hidden_and_restored(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.script(_echo)
    begin_question([("cell", "10291"), ("site", "S1040")])
    hiding = PseudonymizingChatModel(model)
    first = await hiding.complete([ChatMessage(role="user", content=QUESTION)])
    streamed: list[str] = []

    async def sink(text: str) -> None:
        streamed.append(text)

    second = await complete_streamed(
        hiding, [ChatMessage(role="user", content=f"Again: {QUESTION}")], on_text=sink
    )
    sent = json.dumps(llm.requests)
    assert not [name for name in REAL if name in sent], sent
    assert "CELL_1" in sent and "SITE_1" in sent and "EMAIL_1" in sent and "IP_2" in sent
    for answer in (first.text, second.text, streamed[-1]):
        assert all(name in answer for name in REAL), answer
        assert not PLACEHOLDER.search(answer)
    assert json.dumps(llm.requests[0]["messages"]) == json.dumps(
        llm.requests[1]["messages"]
    ).replace("Again: ", ""), "the same placeholders for the same question"


async def test_tool_calls_go_out_hidden_and_come_back_real(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    begin_question([("cell", "10291")])
    hiding = PseudonymizingChatModel(model)
    llm.queue(Reply.tool_call("sql", {"query": "SELECT * FROM t WHERE cell = 'CELL_1'"}))
    earlier = ToolCall(id="c0", name="sql", arguments='{"query": "cell = \'10291\'"}')
    history = [
        ChatMessage(role="user", content="cell 10291?"),
        ChatMessage(role="assistant", tool_calls=[earlier]),
        ChatMessage(role="tool", tool_call_id="c0", content="10291 | 61.0"),
    ]
    completion = await hiding.complete(history)
    assert "10291" not in json.dumps(llm.requests[0]["messages"])
    [call] = completion.tool_calls
    assert json.loads(call.arguments) == {"query": "SELECT * FROM t WHERE cell = '10291'"}


async def test_a_model_s_own_capitals_are_left_alone(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    begin_question([])
    llm.queue(Reply.text("See RFC_1035 and HTTP_2."))
    completion = await PseudonymizingChatModel(model).complete(
        [ChatMessage(role="user", content="What is DNS?")]
    )
    assert completion.text == "See RFC_1035 and HTTP_2."
