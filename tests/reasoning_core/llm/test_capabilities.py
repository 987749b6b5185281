"""Servers that lack a capability: the adapter learns the refusal once and goes the plain way."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.errors import LLMHTTPError, LLMResponseError
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.llm.structured import complete_json
from reasoning_core.ports import ChatMessage, ToolSpec

ASK = [ChatMessage(role="user", content="Answer in JSON: is it up?")]
TOOL = ToolSpec(name="sql", description="run SQL", parameters={"type": "object"})


class Up(BaseModel):
    up: bool


async def test_json_without_response_format_is_prompted_validated_and_remembered(
    model: OpenAIChatModel, llm: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm.refuse_json_schema = True
    llm.queue(Reply.text('Sure: ```json\n{"up": true}\n```'), Reply.text('{"up": false}'))
    first, _ = await complete_json(model, ASK, Up)
    second, _ = await complete_json(model, ASK, Up)
    assert (first.up, second.up) == (True, False)
    sent = llm.requests
    assert "response_format" in sent[0]  # refused with a 400 naming it...
    assert all("response_format" not in r for r in sent[1:])  # ...then never sent again
    assert len(sent) == 3
    refusals = [r for r in caplog.records if "refuses response_format" in r.getMessage()]
    assert len(refusals) == 1 and "plain JSON" in refusals[0].getMessage()


async def test_plain_json_that_does_not_fit_is_repaired(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.refuse_json_schema = True
    llm.queue(Reply.text("it is up"), Reply.text('{"up": true}'))
    answer, usage = await complete_json(model, ASK, Up)
    assert answer.up is True and usage.llm_calls == 2


async def test_tools_refused_then_the_call_goes_without_tools(
    model: OpenAIChatModel, llm: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm.refuse_tools = True
    llm.queue(Reply.text("no tools needed"), Reply.text("still fine"))
    first = await model.complete(ASK, tools=[TOOL])
    second = await model.complete(ASK, tools=[TOOL])
    assert (first.text, second.text) == ("no tools needed", "still fine")
    assert [bool(r.get("tools")) for r in llm.requests] == [True, False, False]
    assert sum("refuses tools" in r.getMessage() for r in caplog.records) == 1


async def test_a_400_about_something_else_is_not_a_refusal(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.queue(Reply.error(400, message="context length exceeded"))
    with pytest.raises(LLMHTTPError) as raised:
        await model.complete(ASK, json_mode=True)
    assert raised.value.status == 400 and llm.request_count == 1


async def test_an_html_page_is_a_malformed_response(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.html = True
    with pytest.raises(LLMResponseError, match="web page, not JSON: check OPENAI_BASE_URL"):
        await model.complete(ASK)
    found = await model.probe()
    assert found.answer is not None and "OPENAI_BASE_URL" in found.answer


@pytest.mark.parametrize(
    ("switch", "missing"),
    [
        (None, set()),
        ("refuse_json_schema", {"json_schema"}),
        ("refuse_tools", {"tools"}),
        ("refuse_streaming", {"streaming"}),
    ],
)
async def test_probe_names_what_the_server_refuses(
    model: OpenAIChatModel, llm: FakeOpenAIServer, switch: str | None, missing: set[str]
) -> None:
    if switch is not None:
        setattr(llm, switch, True)
    found = await model.probe()
    problems = {name: getattr(found, name) for name in ("json_schema", "tools", "streaming")}
    assert found.answer is None
    assert {name for name, problem in problems.items() if problem} == missing
    for name in missing:
        assert "HTTP 400" in str(problems[name])


async def test_probe_of_a_server_that_does_not_answer_says_why_once(
    llm: FakeOpenAIServer,
) -> None:
    llm.api_key = "the-right-key"
    chat_model = OpenAIChatModel(base_url=llm.base_url, api_key="wrong", model="m", timeout=2.0)
    try:
        found = await chat_model.probe()
    finally:
        await chat_model.aclose()
    assert found.answer is not None and "HTTP 401" in found.answer
    assert llm.request_count == 1  # nothing more is tried
