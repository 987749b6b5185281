"""One answer is at most MAX_REPLY_MESSAGES messages; the whole of it follows as a file."""

from __future__ import annotations

from benchmarks.harness.polling_bot import quick_path_settings, running_bot
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.params import UploadedFile
from fake_servers.telegram.server import FakeTelegramServer

CHAT = 880


def _huge_answer() -> str:
    paragraphs = [
        f"Section {i}: the <cell> & its neighbours carried less traffic. " * 8 for i in range(200)
    ]
    return "\n\n".join(paragraphs)


async def test_an_88_kb_answer_is_three_messages_and_a_file(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    text = _huge_answer()
    assert len(text.encode("utf-8")) >= 88_000
    llm.queue(Reply.json({"answer": text, "confidence": 0.8}))
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "Tell me everything about cell traffic")
        await telegram.wait_for(lambda: bool(telegram.sent_documents(CHAT)), timeout=60)
    messages = telegram.sent_messages(CHAT)
    assert len(messages) == 3  # MAX_REPLY_MESSAGES by default, not ~22
    assert all(len(m.text) <= 4096 for m in messages)
    assert "the rest" not in messages[0].text
    assert "all of it is in the file below, answer.txt" in messages[-1].text
    [document] = telegram.sent_documents(CHAT)
    upload = document.params["document"]
    assert isinstance(upload, UploadedFile) and upload.filename == "answer.txt"
    whole = upload.data.decode("utf-8")
    assert "Section 0:" in whole and "Section 199:" in whole  # nothing lost
    assert "the <cell> & its neighbours" in whole  # plain text, not HTML
    assert "confidence (0.80)" in whole


async def test_the_limit_is_a_setting(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.queue(Reply.json({"answer": _huge_answer()[:9000], "confidence": 0.8}))
    settings = quick_path_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=llm.base_url,
        max_reply_messages=1,
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "Tell me a lot")
        await telegram.wait_for(lambda: bool(telegram.sent_documents(CHAT)), timeout=60)
    assert len(telegram.sent_messages(CHAT)) == 1
    assert "longer than 1 messages" in telegram.sent_messages(CHAT)[0].text
