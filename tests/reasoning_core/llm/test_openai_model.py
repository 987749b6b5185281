"""OpenAIChatModel against the fake OpenAI-compatible server, over real HTTP."""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from collections.abc import AsyncIterator

import pytest

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.errors import (
    LLMHTTPError,
    LLMNotConfiguredError,
    LLMResponseError,
    LLMTimeoutError,
)
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.models import Usage
from reasoning_core.ports import ChatMessage, ToolCall, ToolSpec

ASK = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="why?")]
SECRET = "sk-test-secret-0123456789abcdef"


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def model(llm: FakeOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    chat_model = _model(llm, timeout=2.0)
    yield chat_model
    await chat_model.aclose()


def _model(llm: FakeOpenAIServer, **overrides: float | str) -> OpenAIChatModel:
    options: dict[str, float | str] = {"timeout": 2.0, "backoff": 0.02, "api_key": SECRET}
    options.update(overrides)
    return OpenAIChatModel(
        base_url=llm.base_url,
        api_key=str(options["api_key"]),
        model="fake-model",
        timeout=float(options["timeout"]),
        max_retries=int(options.get("max_retries", 2)),
        backoff=float(options["backoff"]),
    )


async def test_text_completion_with_usage(model: OpenAIChatModel, llm: FakeOpenAIServer) -> None:
    llm.queue(Reply.text("because"))
    completion = await model.complete(ASK, max_tokens=50)
    assert completion.text == "because"
    assert completion.finish_reason == "stop"
    assert completion.usage.llm_calls == 1
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
    [request] = llm.requests
    assert request["model"] == "fake-model"
    assert request["max_tokens"] == 50
    assert request["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "why?"},
    ]
    assert "response_format" not in request


async def test_json_mode_asks_for_a_json_object(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    completion = await model.complete(ASK, json_mode=True)
    assert json.loads(completion.text)["confidence"] == 0.9  # the fake's default reply
    assert llm.requests[0]["response_format"] == {"type": "json_object"}


async def test_tools_are_offered_and_tool_calls_parsed(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.queue(Reply.tool_call("add_child", {"title": "outage"}))
    tool = ToolSpec(
        name="add_child",
        description="Add a hypothesis",
        parameters={"type": "object", "properties": {"title": {"type": "string"}}},
    )
    completion = await model.complete(ASK, tools=[tool])
    assert completion.tool_calls == [
        ToolCall(id="call_0", name="add_child", arguments='{"title": "outage"}')
    ]
    assert completion.finish_reason == "tool_calls"
    assert llm.requests[0]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "add_child",
                "description": "Add a hypothesis",
                "parameters": tool.parameters,
            },
        }
    ]


async def test_tool_results_are_sent_back_in_openai_shape(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    call = ToolCall(id="call_7", name="get_status", arguments="{}")
    history = [
        *ASK,
        ChatMessage(role="assistant", tool_calls=[call]),
        ChatMessage(role="tool", content='{"nodes": 3}', tool_call_id="call_7"),
    ]
    await model.complete(history)
    sent = llm.requests[0]["messages"]
    assert sent[2]["tool_calls"] == [
        {"id": "call_7", "type": "function", "function": {"name": "get_status", "arguments": "{}"}}
    ]
    assert sent[3] == {"role": "tool", "content": '{"nodes": 3}', "tool_call_id": "call_7"}


async def test_429_waits_for_retry_after_then_succeeds(
    model: OpenAIChatModel, llm: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm.queue(Reply.error(429, retry_after=0.3), Reply.text("ok"))
    loop = asyncio.get_running_loop()
    started = loop.time()
    with caplog.at_level(logging.WARNING):
        completion = await model.complete(ASK)
    assert completion.text == "ok"
    assert llm.request_count == 2
    assert loop.time() - started >= 0.3  # honoured the server's hint, not the 0.02s backoff
    assert "HTTP 429" in caplog.text
    assert SECRET not in caplog.text


async def test_repeated_500_gives_up_after_bounded_attempts(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.script(lambda _: Reply.error(500))
    with pytest.raises(LLMHTTPError) as caught:
        await model.complete(ASK)
    assert caught.value.status == 500
    assert llm.request_count == 3  # max_retries=2 -> 3 attempts


async def test_client_errors_are_not_retried(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.queue(Reply.error(400, message="bad request shape"))
    with pytest.raises(LLMHTTPError, match="HTTP 400: bad request shape") as caught:
        await model.complete(ASK)
    assert caught.value.status == 400
    assert llm.request_count == 1


async def test_retry_after_beyond_the_budget_stops_retrying(llm: FakeOpenAIServer) -> None:
    model = _model(llm, timeout=0.5)
    llm.queue(Reply.error(429, retry_after=30), Reply.text("too late"))
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        with pytest.raises(LLMHTTPError) as caught:
            await model.complete(ASK)
    finally:
        await model.aclose()
    assert caught.value.status == 429
    assert llm.request_count == 1  # gave up instead of waiting for the hint
    # Cut: far from the 30 s the server asked for (a margin that holds on a busy machine).
    assert loop.time() - started < 15


async def test_hang_times_out_within_about_the_timeout(llm: FakeOpenAIServer) -> None:
    model = _model(llm, timeout=0.5)
    llm.queue(Reply.hang())
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        with pytest.raises(LLMTimeoutError, match=r"within 0.5s"):
            await model.complete(ASK)
    finally:
        await model.aclose()
    elapsed = loop.time() - started
    # The server never answers: the call is cut by the timeout, not before it. The upper
    # bound only says it was cut at all (a busy machine may take a few seconds more).
    assert 0.4 < elapsed < 30
    assert llm.request_count == 1  # timeouts are never retried


async def test_slow_5xx_keeps_the_whole_call_within_twice_the_timeout(
    llm: FakeOpenAIServer,
) -> None:
    model = _model(llm, timeout=1.0, max_retries=100)
    llm.script(lambda _: Reply.error(503, delay=0.3))
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        with pytest.raises((LLMHTTPError, LLMTimeoutError)):
            await model.complete(ASK)
    finally:
        await model.aclose()
    # Retried, and the whole-call deadline (about 2 s) stopped the retries long before
    # the 101 attempts allowed (at least 30 s of slow 503s): cut to well under half.
    assert 2 <= llm.request_count <= 10
    assert loop.time() - started < 15


async def test_malformed_body_is_a_response_error(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.queue(Reply.broken_body())
    with pytest.raises(LLMResponseError):
        await model.complete(ASK)


async def test_unreachable_server_is_an_http_error_without_status() -> None:
    async with FakeOpenAIServer() as server:
        url = server.base_url
    model = OpenAIChatModel(
        base_url=url, api_key=SECRET, model="m", timeout=1.0, max_retries=1, backoff=0.01
    )
    try:
        with pytest.raises(LLMHTTPError, match="could not connect") as caught:
            await model.complete(ASK)
    finally:
        await model.aclose()
    assert caught.value.status is None


async def test_api_key_never_appears_in_errors_or_logs(
    llm: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm.api_key = "the-right-key"  # the fake echoes the wrong key in its 401 message
    model = _model(llm)
    try:
        with caplog.at_level(logging.DEBUG), pytest.raises(LLMHTTPError) as caught:
            await model.complete(ASK)
    finally:
        await model.aclose()
    assert caught.value.status == 401
    rendered = "".join(traceback.format_exception(caught.value))
    assert "Incorrect API key provided: ***" in rendered
    assert SECRET not in rendered
    assert SECRET not in caplog.text


async def test_concurrent_calls_overlap(model: OpenAIChatModel, llm: FakeOpenAIServer) -> None:
    llm.latency = 0.2
    completions = await asyncio.gather(*(model.complete(ASK) for _ in range(4)))
    assert len(completions) == 4
    assert llm.peak_in_flight >= 2
    total = sum((c.usage for c in completions), Usage())
    assert total.llm_calls == 4


async def test_ping_measures_a_cheap_request(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    latency = await model.ping()
    assert isinstance(latency, float) and latency >= 0  # measured; how much is the machine's
    assert llm.request_count == 0  # listed models; no completion spent


def test_no_endpoint_configured_is_a_configuration_error() -> None:
    with pytest.raises(LLMNotConfiguredError, match="OPENAI_API_KEY"):
        OpenAIChatModel(base_url=None, api_key=None, model="m", timeout=1.0)
