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
    llm.refuse_response_format = True
    llm.queue(Reply.text('Sure: ```json\n{"up": true}\n```'), Reply.text('{"up": false}'))
    first, _ = await complete_json(model, ASK, Up)
    second, _ = await complete_json(model, ASK, Up)
    assert (first.up, second.up) == (True, False)
    sent = llm.requests
    kinds = [(r.get("response_format") or {}).get("type") for r in sent]
    # each dialect refused once (a 400 naming response_format), then never sent again
    assert kinds == ["json_schema", "json_object", None, None]
    assert model.structured_output == "plain JSON in the prompt"
    refusals = [r.getMessage() for r in caplog.records if "LLM server refuses" in r.getMessage()]
    assert len(refusals) == 2 and "plain JSON asked for in the prompt" in refusals[1]


async def test_a_llama_cpp_server_gets_a_json_object_with_the_schema(
    model: OpenAIChatModel, llm: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    """llama-cpp-python refuses json_schema with a 500 and a pydantic dump: not retried,
    learnt at once, and the schema goes in a json_object response format from then on."""
    llm.refuse_json_schema = True
    llm.queue(Reply.text('{"up": true}'), Reply.text('{"up": false}'))
    first, _ = await complete_json(model, ASK, Up)
    second, _ = await complete_json(model, ASK, Up)
    assert (first.up, second.up) == (True, False)
    formats = [r["response_format"] for r in llm.requests]
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object"]
    assert formats[1]["schema"] == Up.model_json_schema() == formats[2]["schema"]
    assert model.structured_output == "json_object with schema"
    [refusal] = [r.getMessage() for r in caplog.records if "refuses" in r.getMessage()]
    assert "Input should be 'text' or 'json_object'" in refusal
    assert "literal_error" not in refusal and "app.py" not in refusal  # no raw dump


async def test_plain_json_that_does_not_fit_is_repaired(
    model: OpenAIChatModel, llm: FakeOpenAIServer
) -> None:
    llm.refuse_response_format = True
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
    problems = {name: getattr(found, name) for name in ("tools", "streaming")}
    assert found.answer is None
    assert {name for name, problem in problems.items() if problem} == missing
    for name in missing:
        assert "HTTP 400" in str(problems[name])


@pytest.mark.parametrize(
    ("switch", "dialect", "refused"),
    [
        (None, "json_schema", ()),
        ("refuse_json_schema", "json_object with schema", ("json_schema",)),
        ("refuse_response_format", "plain JSON in the prompt", ("json_schema", "json_object")),
    ],
)
async def test_probe_finds_the_structured_output_dialect(
    model: OpenAIChatModel,
    llm: FakeOpenAIServer,
    switch: str | None,
    dialect: str,
    refused: tuple[str, ...],
) -> None:
    if switch is not None:
        setattr(llm, switch, True)
    found = await model.probe()
    assert (found.structured, found.refused, found.structured_problem) == (dialect, refused, None)
    assert model.structured_output == dialect  # learnt for the calls that follow


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
