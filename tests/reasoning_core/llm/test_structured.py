"""complete_json through the real adapter and the fake OpenAI server."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.errors import LLMResponseError
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.llm.structured import complete_json, extract_json
from reasoning_core.ports import ChatMessage

ASK = [ChatMessage(role="user", content="Is it raining?")]


class Verdict(BaseModel):
    answer: str
    confidence: float = Field(ge=0, le=1)


SCHEMA = Verdict.model_json_schema()


async def test_valid_json(model: OpenAIChatModel, llm: FakeOpenAIServer) -> None:
    llm.queue(Reply.json({"answer": "yes", "confidence": 0.8}))
    verdict, usage = await complete_json(model, ASK, Verdict, max_tokens=100)
    assert verdict == Verdict(answer="yes", confidence=0.8)
    assert usage.llm_calls == 1
    wanted = {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}
    assert llm.requests[0]["response_format"] == wanted
    assert llm.requests[0]["max_tokens"] == 100


async def test_fenced_json_after_prose(model: OpenAIChatModel, llm: FakeOpenAIServer) -> None:
    llm.queue('Here you go:\n```json\n{"answer": "no", "confidence": 0.4}\n```\nAnything else?')
    verdict, _ = await complete_json(model, ASK, Verdict)
    assert verdict.answer == "no"
    assert llm.request_count == 1


async def test_invalid_json_is_repaired_once(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.queue(Reply.malformed(), Reply.json({"answer": "fixed", "confidence": 0.6}))
    verdict, usage = await complete_json(model, ASK, Verdict)
    assert verdict.answer == "fixed"
    assert llm.request_count == 2
    assert usage.llm_calls == 2
    repair = llm.requests[1]["messages"]
    assert repair[:1] == [{"role": "user", "content": "Is it raining?"}]
    assert repair[1] == {"role": "assistant", "content": '{"answer": '}
    assert "not valid JSON" in repair[2]["content"]
    assert "corrected JSON object only" in repair[2]["content"]


async def test_schema_violation_is_repaired(model: OpenAIChatModel, llm: FakeOpenAIServer) -> None:
    llm.queue(
        Reply.json({"answer": "yes", "confidence": 7}),
        Reply.json({"answer": "yes", "confidence": 0.7}),
    )
    verdict, usage = await complete_json(model, ASK, Verdict)
    assert verdict.confidence == 0.7
    assert usage.llm_calls == 2
    feedback = llm.requests[1]["messages"][-1]["content"]
    assert "confidence: Input should be less than or equal to 1" in feedback


async def test_invalid_twice_raises_with_a_short_reason(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.queue(Reply.malformed("I think it is sunny " * 200), Reply.json({"answer": "x"}))
    with pytest.raises(LLMResponseError) as caught:
        await complete_json(model, ASK, Verdict)
    message = str(caught.value)
    assert message.startswith("the LLM answer did not fit Verdict after one repair:")
    assert "confidence: Field required" in message
    assert len(message) < 400
    assert llm.request_count == 2  # exactly one repair


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  ```\n{"a": 1}\n```  ', {"a": 1}),
        ('```json\n{"a": 1}', {"a": 1}),
        ('Sure! {"a": {"b": [1, 2]}} Hope that helps.', {"a": {"b": [1, 2]}}),
        ('Use {braces} like {"a": 1}', {"a": 1}),
        ("[1, 2]", [1, 2]),
    ],
)
def test_extract_json_tolerates_wrappers(text: str, expected: object) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", '{"a": '])
def test_extract_json_rejects_non_json(text: str) -> None:
    with pytest.raises(LLMResponseError):
        extract_json(text)


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        (
            '<think>Rain? Let me see... {"no": 1}</think>\n{"answer": "yes", "confidence": 0.5}',
            "yes",
        ),
        ('<think>\nhmm\n</think>```json\n{"answer": "no", "confidence": 0.5}\n```', "no"),
    ],
)
async def test_a_think_block_and_a_fence_are_stripped(
    model: OpenAIChatModel, llm: FakeOpenAIServer, text: str, answer: str
) -> None:
    llm.queue(Reply.text(text))
    verdict, _ = await complete_json(model, ASK, Verdict)
    assert verdict.answer == answer and llm.request_count == 1


@pytest.mark.parametrize(
    ("text", "described"),
    [
        ("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", "an HTML page, not JSON"),
        ("", "the answer was empty"),
        ("<think>It might rain, or it might not; I keep thinking", "a <think> block with no JSON"),
        (
            "<think>ok</think> It is raining, I am sure.",
            "prose after a <think> block, with no JSON",
        ),
    ],
)
async def test_garbage_is_a_short_error_that_says_what_the_model_did(
    model: OpenAIChatModel,
    llm: FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
    text: str,
    described: str,
) -> None:
    llm.queue(Reply.text(text), Reply.text(text))
    with pytest.raises(LLMResponseError, match="after one repair") as raised:
        await complete_json(model, ASK, Verdict)
    assert described in str(raised.value) and len(str(raised.value)) < 200
    logged = [
        r.getMessage() for r in caplog.records if "Verdict answer is unusable" in r.getMessage()
    ]
    assert logged and described in logged[0]
