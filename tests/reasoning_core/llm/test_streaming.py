"""Streamed completions over real HTTP, and reading a JSON answer while it is written."""

from __future__ import annotations

import json

import pytest

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.answers.quick import answer_quickly
from reasoning_core.errors import LLMResponseError
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.llm.streaming import partial_field
from reasoning_core.ports import ChatMessage

ASK = [ChatMessage(role="user", content="hello")]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", None),
        ('{"answer', None),
        ('{"answer": "', ""),
        ('{"answer": "Hel', "Hel"),
        ('{"answer": "Hello", "confidence": 0.9}', "Hello"),
        ('{"strategy": "quick", "answer": "a \\"b\\" c', 'a "b" c'),
        ('{"answer": "line\\', "line"),  # an escape cut in half is not shown yet
        ('{"answer": "caf\\u00', "caf"),
        ('{"answer": "caf\\u00e9 \\n', "café \n"),
        ('{"answer": "smile \\ud83d', "smile "),  # half a surrogate pair waits
        ('{"answer": "smile \\ud83d\\ude00"', "smile 😀"),
        ('{"answer": "bad \\x"', None),
    ],
)
def test_partial_field_reads_the_string_so_far(raw: str, expected: str | None) -> None:
    assert partial_field(raw, "answer") == expected


async def test_stream_hands_out_growing_text_and_usage(
    llm: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    llm.queue(Reply.text("one two three four"))
    seen: list[str] = []

    async def on_text(text: str) -> None:
        seen.append(text)

    completion = await model.stream(ASK, on_text=on_text)
    assert completion.text == "one two three four"
    assert seen == ["one", "one two", "one two three", "one two three four"]
    assert completion.usage.llm_calls == 1
    assert completion.usage.completion_tokens > 0, "usage comes from the last chunk"
    assert llm.requests[0]["stream"] is True


async def test_a_server_that_cannot_stream_gives_the_whole_reply(
    llm: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    llm.refuse_streaming = True
    seen: list[str] = []

    async def on_text(text: str) -> None:
        seen.append(text)

    first = await model.stream(ASK, on_text=on_text)
    second = await model.stream(ASK, on_text=on_text)
    assert first.text == second.text == llm.default.content
    assert seen == [llm.default.content] * 2
    streamed = [bool(r.get("stream")) for r in llm.requests]
    assert streamed == [True, False, False], "the refusal is remembered"


async def test_quick_answer_streams_only_the_answer_text(
    llm: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    body = {"answer": 'DNS "maps" names to addresses.', "confidence": 0.8}
    llm.queue(Reply.text(json.dumps(body), chunks=list(_pieces(json.dumps(body), 5))))
    shown: list[str] = []

    class Shown:
        async def partial(self, text: str) -> None:
            shown.append(text)

    answer = await answer_quickly(model, ASK, stream=Shown())
    assert answer.text == body["answer"]
    assert shown[-1] == body["answer"]
    assert all(body["answer"].startswith(s) for s in shown), "only prefixes of the answer"
    assert len(shown) == len(set(shown)) > 2, "the same text is never shown twice"


PLAIN = "DNS turns names into addresses.\n\nResolvers cache what they learn."


async def test_a_streamed_plain_answer_shows_prefixes_of_the_answer_only(
    llm: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    content = f"{PLAIN}\nCONFIDENCE: 0.75 | UNSURE: -"
    llm.queue(Reply.text(content, chunks=[content[i : i + 3] for i in range(0, len(content), 3)]))
    shown: list[str] = []

    class Shown:
        async def partial(self, text: str) -> None:
            shown.append(text)

    answer = await answer_quickly(model, ASK, stream=Shown())
    assert (answer.text, answer.confidence) == (PLAIN, 0.75)
    assert shown[-1] == PLAIN
    assert all(PLAIN.startswith(s) for s in shown), "never the trailer, only the answer"
    assert len(shown) == len(set(shown)) > 2
    assert "response_format" not in llm.requests[0]


async def test_an_unusable_quick_reply_is_asked_for_once_more(
    llm: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    llm.queue(Reply.malformed(), Reply.text(f"{PLAIN}\nCONFIDENCE: 0.8 | UNSURE: -"))
    answer = await answer_quickly(model, ASK)
    assert (answer.text, answer.confidence) == (PLAIN, 0.8)
    assert answer.usage.llm_calls == 2
    assert "plain text" in llm.requests[1]["messages"][-1]["content"]


async def test_paced_fake_model_streams_tokens_at_its_rate() -> None:
    async with FakeOpenAIServer(tokens_per_s=200) as paced:
        paced_model = OpenAIChatModel(
            base_url=paced.base_url, api_key="test", model="fake-model", timeout=5.0
        )
        paced.queue(Reply.text("x" * 40))  # ten tokens of four characters
        seen: list[str] = []

        async def on_text(text: str) -> None:
            seen.append(text)

        await paced_model.stream(ASK, on_text=on_text)
        await paced_model.aclose()
    assert [len(s) for s in seen] == list(range(4, 44, 4))


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def test_a_web_page_instead_of_a_stream_is_named(
    llm: FakeOpenAIServer, model: OpenAIChatModel
) -> None:
    llm.html = True

    async def on_text(text: str) -> None:
        raise AssertionError("nothing is shown of a web page")

    with pytest.raises(LLMResponseError, match="web page"):
        await model.stream(ASK, on_text=on_text)
