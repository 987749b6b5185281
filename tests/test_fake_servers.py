"""The network-edge fakes behave like the real services, as the real clients see them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import aiohttp
import openai
import pytest
from aiogram import Bot, Dispatcher, F
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.exceptions import TelegramBadRequest, TelegramRetryAfter, TelegramServerError
from aiogram.types import (
    BotCommand,
    BufferedInputFile,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
)
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.params import UploadedFile
from fake_servers.telegram.server import USER_VISIBLE, FakeTelegramServer, internal_leaks

TOKEN = "123456:TEST-token-abcdefghijklmnopqrstuvwxyz"
MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hello"}]


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer(poll_cap=0.3) as fake:
        yield fake


@pytest.fixture
async def bot(telegram: FakeTelegramServer) -> AsyncIterator[Bot]:
    session = AiohttpSession(api=TelegramAPIServer.from_base(telegram.base_url))
    bot = Bot(token=TOKEN, session=session)
    yield bot
    await bot.session.close()


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def client(llm: FakeOpenAIServer) -> AsyncIterator[AsyncOpenAI]:
    async with AsyncOpenAI(base_url=llm.base_url, api_key="test", max_retries=0) as client:
        yield client


# --- Telegram: sending and editing ---------------------------------------------------------


async def test_get_me_answers_with_the_bot_named_by_the_token(bot: Bot) -> None:
    me = await bot.get_me()
    assert me.id == 123456
    assert me.is_bot
    assert me.username == "whytree_test_bot"


async def test_send_message_parses_html_like_telegram(
    bot: Bot, telegram: FakeTelegramServer
) -> None:
    keyboard = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="Yes", callback_data="yes")]]
    )
    sent = await bot.send_message(
        42, "<b>Sure</b> &amp; <i>certain</i>", parse_mode="HTML", reply_markup=keyboard
    )
    assert isinstance(sent, Message)
    assert sent.text == "Sure & certain"
    assert [(e.type, e.offset, e.length) for e in sent.entities or []] == [
        ("bold", 0, 4),
        ("italic", 7, 7),
    ]
    assert sent.reply_markup is not None
    assert sent.reply_markup.model_dump() == keyboard.model_dump()
    assert sent.chat.id == 42
    assert sent.from_user is not None and sent.from_user.is_bot
    [call] = telegram.sent_messages(42)
    assert call.params["parse_mode"] == "HTML"
    assert call.text == "<b>Sure</b> &amp; <i>certain</i>"
    assert call.params["reply_markup"] == {
        "inline_keyboard": [[{"text": "Yes", "callback_data": "yes"}]]
    }


async def test_message_ids_increase_per_chat(bot: Bot) -> None:
    first = await bot.send_message(1, "a")
    second = await bot.send_message(1, "b")
    other = await bot.send_message(2, "c")
    assert (first.message_id, second.message_id, other.message_id) == (1, 2, 1)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<b>bold", 'Can\'t find end tag corresponding to start tag "b"'),
        ("line<br>break", 'Unsupported start tag "br" at byte offset 4'),
        ("a < b", 'Unsupported start tag "" at byte offset 2'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ("<b><i>x</b></i>", 'Unmatched end tag at byte offset 7, expected "</i>", found "</b>"'),
        ("<b", "Unclosed start tag at byte offset 0"),
    ],
)
async def test_invalid_html_is_rejected_with_telegrams_words(
    bot: Bot, telegram: FakeTelegramServer, text: str, reason: str
) -> None:
    with pytest.raises(TelegramBadRequest) as caught:
        await bot.send_message(7, text, parse_mode="HTML")
    assert caught.value.message == f"Bad Request: can't parse entities: {reason}"
    assert telegram.sent_messages() == []
    assert telegram.calls_of("sendMessage")[0].status == 400


async def test_valid_html_features_are_accepted(bot: Bot) -> None:
    text = (
        '<a href="https://example.com/?a=1&amp;b=2">link</a> <code>x &lt; y</code> '
        '<pre>p</pre> <span class="tg-spoiler">s</span> <blockquote>q</blockquote> a & b'
    )
    sent = await bot.send_message(7, text, parse_mode="HTML")
    assert sent.text == "link x < y p s q a & b"
    link = (sent.entities or [])[0]
    assert (link.type, link.url) == ("text_link", "https://example.com/?a=1&b=2")


async def test_length_limit_counts_text_after_parsing(bot: Bot) -> None:
    await bot.send_message(7, "<b>" + "x" * 4096 + "</b>", parse_mode="HTML")
    with pytest.raises(TelegramBadRequest, match="message is too long"):
        await bot.send_message(7, "x" * 4097)
    with pytest.raises(TelegramBadRequest, match="message is too long"):
        await bot.send_message(7, "😀" * 2049)  # UTF-16: 4098 units
    with pytest.raises(TelegramBadRequest, match="message text is empty"):
        await bot.send_message(7, "<b> </b>", parse_mode="HTML")


async def test_edit_message_text(bot: Bot, telegram: FakeTelegramServer) -> None:
    sent = await bot.send_message(5, "working…")
    edited = await bot.edit_message_text(
        "<b>done</b>", chat_id=5, message_id=sent.message_id, parse_mode="HTML"
    )
    assert isinstance(edited, Message)
    assert (edited.text, edited.message_id, edited.edit_date is not None) == (
        "done",
        sent.message_id,
        True,
    )
    with pytest.raises(TelegramBadRequest, match="message is not modified"):
        await bot.edit_message_text(
            "<b>done</b>", chat_id=5, message_id=sent.message_id, parse_mode="HTML"
        )
    with pytest.raises(TelegramBadRequest, match="message to edit not found"):
        await bot.edit_message_text("x", chat_id=5, message_id=999)
    assert [e.text for e in telegram.edits(5)] == ["<b>done</b>"]


def png_header(width: int, height: int) -> bytes:
    """The start of a PNG: enough for Telegram (and the fake) to read its size."""
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 6, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + len(ihdr).to_bytes(4, "big") + b"IHDR" + ihdr + b"\0" * 4


async def test_photo_and_document_uploads_with_captions_and_limits(
    bot: Bot, telegram: FakeTelegramServer
) -> None:
    markup = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="text", callback_data="t")]]
    )
    photo = BufferedInputFile(png_header(800, 600), filename="tree.png")
    sent = await bot.send_photo(42, photo, caption="<b>tree</b> 0.86", parse_mode="HTML",
                                reply_markup=markup)  # fmt: skip
    assert sent.photo and (sent.photo[0].width, sent.photo[0].height) == (800, 600)
    assert sent.caption == "tree 0.86" and sent.reply_markup is not None
    assert sent.reply_markup.inline_keyboard[0][0].callback_data == "t"
    [call] = telegram.sent_photos(42)
    assert call.params["photo"].data == png_header(800, 600) and call.caption.startswith("<b>")
    document = await bot.send_document(42, BufferedInputFile(b"<svg/>", filename="tree.svg"))
    assert document.document is not None and document.document.file_name == "tree.svg"
    assert telegram.sent_documents(42)[0].params["document"].data == b"<svg/>"
    for width, height in ((9000, 1200), (100, 2500)):  # sides over 10000; ratio over 20
        with pytest.raises(TelegramBadRequest, match="PHOTO_INVALID_DIMENSIONS"):
            await bot.send_photo(42, BufferedInputFile(png_header(width, height), "x.png"))
    with pytest.raises(TelegramBadRequest, match="IMAGE_PROCESS_FAILED"):
        await bot.send_photo(42, BufferedInputFile(b"GIF89a", "x.gif"))
    with pytest.raises(TelegramBadRequest, match="caption is too long"):
        await bot.send_photo(42, BufferedInputFile(png_header(9, 9), "x.png"), caption="x" * 1025)


async def test_other_methods_are_recorded(bot: Bot, telegram: FakeTelegramServer) -> None:
    sent = await bot.send_message(3, "pick")
    markup = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="A", callback_data="a")]]
    )
    await bot.edit_message_reply_markup(chat_id=3, message_id=sent.message_id, reply_markup=markup)
    assert await bot.send_chat_action(3, "typing")
    assert await bot.set_my_commands([BotCommand(command="start", description="Start")])
    assert await bot.delete_webhook()
    assert await bot.delete_message(3, sent.message_id)
    with pytest.raises(TelegramBadRequest, match="message to delete not found"):
        await bot.delete_message(3, sent.message_id)
    assert [a.params["action"] for a in telegram.actions] == ["typing"]
    assert telegram.state.commands == [{"command": "start", "description": "Start"}]
    assert telegram.calls_of("deleteWebhook")[0].ok


async def test_unknown_method_and_json_bodies(telegram: FakeTelegramServer) -> None:
    async with aiohttp.ClientSession() as http:
        url = f"{telegram.base_url}/bot{TOKEN}"
        async with http.post(f"{url}/sendMessage", json={"chat_id": 9, "text": "hi"}) as resp:
            body = await resp.json()
            assert (resp.status, body["ok"], body["result"]["text"]) == (200, True, "hi")
        async with http.get(f"{url}/noSuchMethod") as resp:
            assert resp.status == 404
            assert await resp.json() == {
                "ok": False,
                "error_code": 404,
                "description": "Not Found",
            }
        async with http.get(f"{telegram.base_url}/botnot-a-token/getMe") as resp:
            assert resp.status == 401


# --- Telegram: failure injection -----------------------------------------------------------


async def test_injected_429_comes_back_as_retry_after(
    bot: Bot, telegram: FakeTelegramServer
) -> None:
    telegram.fail_next("sendMessage", status=429, retry_after=3)
    with pytest.raises(TelegramRetryAfter) as caught:
        await bot.send_message(1, "x")
    assert caught.value.retry_after == 3
    await bot.send_message(1, "x")
    assert [c.status for c in telegram.calls_of("sendMessage")] == [429, 200]


async def test_injected_400_and_5xx(bot: Bot, telegram: FakeTelegramServer) -> None:
    telegram.fail_next("sendMessage", status=400)
    with pytest.raises(TelegramBadRequest, match="can't parse entities"):
        await bot.send_message(1, "x")
    telegram.fail_next("*", status=502, times=2)
    for _ in range(2):
        with pytest.raises(TelegramServerError):
            await bot.get_me()
    assert (await bot.get_me()).id == 123456


# --- Telegram: updates ---------------------------------------------------------------------


async def test_get_updates_follows_the_offset_rule(bot: Bot, telegram: FakeTelegramServer) -> None:
    first = telegram.push_message(10, "one")
    second = telegram.push_message(10, "two")
    updates = await bot.get_updates(timeout=0)
    assert [u.update_id for u in updates] == [first, second]
    assert [u.message.text for u in updates if u.message] == ["one", "two"]
    assert [u.update_id for u in await bot.get_updates(offset=second)] == [second]
    assert await bot.get_updates(offset=second + 1, timeout=0) == []


async def test_long_poll_wakes_on_a_new_update(bot: Bot, telegram: FakeTelegramServer) -> None:
    poll = asyncio.create_task(bot.get_updates(timeout=30))
    await asyncio.sleep(0.05)
    assert not poll.done()
    update_id = telegram.push_message(11, "late")
    updates = await asyncio.wait_for(poll, 10)  # woken: well before the poll's 30 s
    assert [u.update_id for u in updates] == [update_id]


async def test_empty_long_poll_returns_after_the_cap(bot: Bot) -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await bot.get_updates(timeout=30) == []
    assert 0.2 < loop.time() - started < 15  # the cap, not the 30 s asked for


async def test_pushed_update_variants_parse_in_aiogram(
    bot: Bot, telegram: FakeTelegramServer
) -> None:
    own = await bot.send_message(-100, "bot says")
    telegram.push_message(-100, "@whytree_test_bot why?", user_id=5, chat_type="supergroup")
    telegram.push_message(-100, "and?", user_id=5, chat_type="supergroup", reply_to_bot=True)
    telegram.push_message(20, None, content="sticker")
    telegram.push_message(20, "look", content="photo")
    telegram.push_message(20, None, content="document")
    telegram.push_message(20, "fixed", edited=True)
    telegram.push_message(20, "/start now")
    cb = telegram.push_callback(-100, 5, "opt:1", own.message_id)
    updates = await bot.get_updates(timeout=0)
    mention, reply, sticker, photo, document, edited, command, callback = updates
    assert mention.message and mention.message.chat.type == "supergroup"
    assert [(e.type, e.offset) for e in mention.message.entities or []] == [("mention", 0)]
    assert reply.message and reply.message.reply_to_message
    assert reply.message.reply_to_message.message_id == own.message_id
    assert sticker.message and sticker.message.sticker and sticker.message.text is None
    assert photo.message and photo.message.photo and photo.message.caption == "look"
    assert document.message and document.message.document
    assert edited.edited_message and edited.edited_message.text == "fixed"
    assert command.message and (command.message.entities or [])[0].type == "bot_command"
    assert callback.update_id == cb and callback.callback_query
    assert callback.callback_query.data == "opt:1"
    query_id = callback.callback_query.id
    assert await bot.answer_callback_query(query_id, text="ok")
    with pytest.raises(TelegramBadRequest, match="query is too old"):
        await bot.answer_callback_query(query_id)
    assert [a.params["callback_query_id"] for a in telegram.callback_answers] == [query_id]


async def test_wait_for_messages_and_its_readable_timeout(
    bot: Bot, telegram: FakeTelegramServer
) -> None:
    async def later() -> None:
        await asyncio.sleep(0.05)
        await bot.send_message(8, "first")
        await bot.send_message(8, "second")

    task = asyncio.create_task(later())
    sent = await telegram.wait_for_messages(8, 2)
    await task
    assert [m.text for m in sent] == ["first", "second"]
    with pytest.raises(AssertionError, match=r"(?s)within 0.1s.*sendMessage.*'first'"):
        await telegram.wait_for_messages(8, 3, timeout=0.1)


async def test_real_polling_round_trip(bot: Bot, telegram: FakeTelegramServer) -> None:
    dp = Dispatcher()

    @dp.message(F.text)
    async def echo(message: Message) -> None:
        await message.answer(f"<i>{message.text}</i>", parse_mode="HTML")

    polling = asyncio.create_task(
        dp.start_polling(bot, polling_timeout=30, handle_signals=False, close_bot_session=False)
    )
    try:
        for n in range(3):
            telegram.push_message(77, f"ping {n}")
        replies = await telegram.wait_for_messages(77, 3, timeout=5)
    finally:
        await dp.stop_polling()
        await polling
    assert sorted(r.text for r in replies) == ["<i>ping 0</i>", "<i>ping 1</i>", "<i>ping 2</i>"]
    offsets = [c.params.get("offset") for c in telegram.calls_of("getUpdates")]
    assert offsets[0] is None and offsets[-1] == max(o or 0 for o in offsets)


# --- OpenAI-compatible fake ------------------------------------------------------------------


async def test_default_reply_is_json_with_usage(
    client: AsyncOpenAI, llm: FakeOpenAIServer
) -> None:
    response = await client.chat.completions.create(model="m", messages=MESSAGES)
    assert json.loads(response.choices[0].message.content or "")["answer"]
    assert response.usage is not None and response.usage.total_tokens > 0
    assert (llm.request_count, llm.requests[0]["messages"]) == (1, MESSAGES)


async def test_queued_and_scripted_replies(client: AsyncOpenAI, llm: FakeOpenAIServer) -> None:
    llm.queue(Reply.text("plain"), {"answer": 1})
    llm.script(lambda request: f"echo {request['messages'][-1]['content']}")
    texts = [
        (await client.chat.completions.create(model="m", messages=MESSAGES))
        .choices[0]
        .message.content
        for _ in range(3)
    ]
    assert texts == ["plain", '{"answer": 1}', "echo hello"]


async def test_tool_calls(client: AsyncOpenAI, llm: FakeOpenAIServer) -> None:
    llm.queue(Reply.tool_calls_of(("add_child", {"title": "x"}), ("get_status", "{}")))
    response = await client.chat.completions.create(model="m", messages=MESSAGES)
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls or []
    assert [(c.function.name, c.function.arguments) for c in calls] == [  # type: ignore[union-attr]
        ("add_child", '{"title": "x"}'),
        ("get_status", "{}"),
    ]


async def test_streaming_chunks(client: AsyncOpenAI, llm: FakeOpenAIServer) -> None:
    llm.queue(Reply.text("the quick fox", chunks=["the ", "quick ", "fox"]))
    stream = await client.chat.completions.create(
        model="m",
        messages=MESSAGES,
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces, usage = [], None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        usage = chunk.usage or usage
    assert pieces == ["the ", "quick ", "fox"]
    assert usage is not None and usage.completion_tokens > 0


async def test_error_replies(client: AsyncOpenAI, llm: FakeOpenAIServer) -> None:
    llm.queue(Reply.error(429, retry_after=1.5), Reply.error(500))
    with pytest.raises(openai.RateLimitError) as limited:
        await client.chat.completions.create(model="m", messages=MESSAGES)
    headers = limited.value.response.headers
    assert (headers["retry-after"], headers["retry-after-ms"]) == ("2", "1500")
    with pytest.raises(openai.InternalServerError):
        await client.chat.completions.create(model="m", messages=MESSAGES)
    assert llm.request_count == 2


async def test_hang_and_latency(llm: FakeOpenAIServer) -> None:
    llm.queue(Reply.hang())
    async with AsyncOpenAI(
        base_url=llm.base_url, api_key="t", max_retries=0, timeout=0.3
    ) as client:
        with pytest.raises(openai.APITimeoutError):
            await client.chat.completions.create(model="m", messages=MESSAGES)
        llm.latency = 0.2
        await asyncio.gather(
            *(client.chat.completions.create(model="m", messages=MESSAGES) for _ in range(3))
        )
    assert llm.peak_in_flight >= 3
    assert llm.in_flight <= 1  # only the hung request may still be held


async def test_api_key_check(llm: FakeOpenAIServer) -> None:
    llm.api_key = "right-key"
    async with AsyncOpenAI(base_url=llm.base_url, api_key="wrong-key", max_retries=0) as client:
        with pytest.raises(openai.AuthenticationError):
            await client.models.list()


# --- Telegram: documents, and what users were shown --------------------------------------


async def test_send_document_keeps_the_upload_and_its_caption(
    bot: Bot, telegram: FakeTelegramServer
) -> None:
    sent = await bot.send_document(
        7, BufferedInputFile(b"the whole answer", filename="answer.txt"), caption="all of it"
    )
    assert sent.document is not None and sent.document.file_name == "answer.txt"
    assert sent.document.file_size == len(b"the whole answer") and sent.caption == "all of it"
    [call] = telegram.sent_documents(7)
    upload = call.params["document"]
    assert isinstance(upload, UploadedFile) and upload.data == b"the whole answer"
    assert (("sendDocument", "the whole answer") in USER_VISIBLE) and (
        ("sendDocument", "all of it") in USER_VISIBLE
    )
    with pytest.raises(TelegramBadRequest, match="file must be non-empty"):
        await bot.send_document(7, BufferedInputFile(b"", filename="empty.txt"))


def test_internal_leaks_finds_exception_names_and_tracebacks() -> None:
    shown = [
        ("sendMessage", "Sorry — something went wrong (error 3fa9c1). Please try again."),
        ("sendMessage", "the database is unreachable: ConnectionDoesNotExistError: closed"),
        ("editMessageText", "🔎 The llm planner failed (LLMTimeoutError)"),
        ("sendDocument", "Traceback (most recent call last):"),
        ("sendMessage", "An error rate of 5% is high; errors and exceptions are counted."),
    ]
    leaks = internal_leaks(shown)
    assert len(leaks) == 3
    assert "ConnectionDoesNotExistError" in leaks[0] and leaks[2].startswith("sendDocument")
