"""The bot's request middlewares, with a real Bot against the fake Telegram server."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.exceptions import (
    ClientDecodeError,
    TelegramBadRequest,
    TelegramRetryAfter,
    TelegramServerError,
)
from aiogram.methods import Response
from aiogram.types import Message

from bot.telegram.session import TransientRetryMiddleware, install_request_middlewares, strip_html
from fake_servers.telegram.server import FakeTelegramServer

TOKEN = "123456:TEST-token-abcdefghijklmnopqrstuvwxyz"
BROKEN = "<b>Cause</b>: load &gt; 90% &amp; rising<br>see <i>graph"


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer() as fake:
        yield fake


def _bot(telegram: FakeTelegramServer) -> Bot:
    """Configured as bot/wiring/app.py does: HTML by default."""
    return Bot(
        token=TOKEN,
        session=AiohttpSession(api=TelegramAPIServer.from_base(telegram.base_url)),
        default=DefaultBotProperties(parse_mode=ParseMode.HTML),
    )


@pytest.fixture
async def bot(telegram: FakeTelegramServer) -> AsyncIterator[Bot]:
    bot = _bot(telegram)
    install_request_middlewares(bot)
    yield bot
    await bot.session.close()


async def test_429_is_retried_after_retry_after(bot: Bot, telegram: FakeTelegramServer) -> None:
    telegram.fail_next("sendMessage", status=429, retry_after=1)
    loop = asyncio.get_running_loop()
    started = loop.time()
    sent = await bot.send_message(1, "<b>hello</b>")
    assert isinstance(sent, Message) and sent.text == "hello"
    assert loop.time() - started >= 1.0
    assert [c.status for c in telegram.calls_of("sendMessage")] == [429, 200]
    assert [m.text for m in telegram.sent_messages(1)] == ["<b>hello</b>"]


async def test_retries_end_at_the_deadline(telegram: FakeTelegramServer) -> None:
    bot = _bot(telegram)
    bot.session.middleware(TransientRetryMiddleware(deadline_sec=2.5, base_sec=0.05))
    try:
        telegram.fail_next("sendMessage", status=429, retry_after=1, times=3)
        with pytest.raises(TelegramRetryAfter):  # 1 s, 1 s, 1 s: past the 2.5 s deadline
            await bot.send_message(1, "x")
        # Retried, never waiting past the deadline: 3 calls, 2 when a busy machine is slow.
        assert 2 <= len(telegram.calls_of("sendMessage")) <= 3
        before = len(telegram.calls_of("sendMessage"))
        telegram.fail_next("sendMessage", status=500, times=1000)
        with pytest.raises(TelegramServerError):
            await bot.send_message(1, "x")
        assert len(telegram.calls_of("sendMessage")) - before >= 3  # backed off, retried, gave up
    finally:
        await bot.session.close()


async def test_5xx_and_a_non_json_502_are_retried(bot: Bot, telegram: FakeTelegramServer) -> None:
    telegram.fail_next("sendMessage", status=500, times=2)
    telegram.fail_next("sendMessage", status=502, raw_body="<html>Bad Gateway</html>")
    sent = await bot.send_message(3, "still here")
    assert sent.text == "still here"
    assert [c.status for c in telegram.calls_of("sendMessage")] == [500, 500, 502, 200]


async def test_a_non_json_answer_past_the_deadline_is_a_decode_error(
    telegram: FakeTelegramServer,
) -> None:
    bot = _bot(telegram)
    bot.session.middleware(TransientRetryMiddleware(deadline_sec=0.3, base_sec=0.05))
    try:
        telegram.fail_next("getMe", status=502, raw_body="<html>Bad Gateway</html>", times=100)
        with pytest.raises(ClientDecodeError):
            await bot.get_me()
    finally:
        await bot.session.close()


async def test_parse_error_falls_back_to_plain_text(
    bot: Bot, telegram: FakeTelegramServer
) -> None:
    sent = await bot.send_message(2, BROKEN)
    assert sent.text == "Cause: load > 90% & risingsee graph"
    first, second = telegram.calls_of("sendMessage")
    assert first.status == 400 and first.params["parse_mode"] == "HTML"
    assert second.ok
    assert "parse_mode" not in second.params
    assert second.text == "Cause: load > 90% & risingsee graph"
    assert "<" not in second.text


async def test_parse_error_on_edit_falls_back_too(bot: Bot, telegram: FakeTelegramServer) -> None:
    status = await bot.send_message(3, "working…")
    edited = await bot.edit_message_text(BROKEN, chat_id=3, message_id=status.message_id)
    assert isinstance(edited, Message)
    assert edited.text == "Cause: load > 90% & risingsee graph"
    assert [e.params.get("parse_mode") for e in telegram.calls_of("editMessageText")] == [
        "HTML",
        None,
    ]


async def test_other_bad_requests_still_raise(bot: Bot, telegram: FakeTelegramServer) -> None:
    with pytest.raises(TelegramBadRequest, match="message is too long"):
        await bot.send_message(4, "x" * 5000)
    telegram.fail_next("sendMessage", status=400)  # "can't parse entities", yet no HTML sent
    with pytest.raises(TelegramBadRequest, match="can't parse entities"):
        await bot.send_message(4, "plain", parse_mode=None)
    assert len(telegram.calls_of("sendMessage")) == 2


async def test_message_not_modified_is_ignored(bot: Bot, telegram: FakeTelegramServer) -> None:
    sent = await bot.send_message(5, "<b>same</b>")
    result = await bot.edit_message_text("<b>same</b>", chat_id=5, message_id=sent.message_id)
    assert result is True
    [edit] = telegram.calls_of("editMessageText")
    assert "message is not modified" in (edit.description or "")


async def test_not_modified_on_a_send_is_not_swallowed(
    bot: Bot, telegram: FakeTelegramServer
) -> None:
    telegram.fail_next(
        "sendMessage", status=400, description="Bad Request: message is not modified"
    )
    with pytest.raises(TelegramBadRequest):
        await bot.send_message(6, "x")


def test_strip_html_keeps_the_words() -> None:
    assert strip_html('<a href="https://x.y/?a=1&amp;b=2">link</a> a &lt; b') == "link a < b"
    assert strip_html("1 < 2 and 3 > 2") == "1 < 2 and 3 > 2"
    assert strip_html('<span class="tg-spoiler">hidden</span>') == "hidden"


async def test_the_response_class_of_a_method_is_built_once(
    bot: Bot, telegram: FakeTelegramServer
) -> None:
    """pydantic caches ``Response[T]`` weakly: without the middleware's reference the class
    died after each call and the next one built it again (a schema build per API call)."""
    await bot.send_message(1, "first")
    built = weakref.ref(Response[Message])
    gc.collect()
    assert built() is not None, "the class outlives the call"
    await bot.send_message(1, "second")
    assert Response[Message] is built()
