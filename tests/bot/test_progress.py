"""The live status message and the editor under it (and under the streamed answer): one
message, edits coalesced to at most one per interval, none that changes nothing."""

from __future__ import annotations

from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode

from benchmarks.harness.polling_bot import TEST_TOKEN
from bot.telegram.replies.editor import ThrottledEditor
from bot.telegram.replies.progress import ProgressMessage
from fake_servers.telegram.server import FakeTelegramServer
from reasoning_core.events import NodeCompletedEvent, StrategySelectedEvent
from reasoning_core.models import StrategyDecision


async def test_edits_are_throttled_and_the_status_is_removed(telegram: FakeTelegramServer) -> None:
    now = [100.0]
    bot = Bot(
        TEST_TOKEN,
        session=AiohttpSession(api=TelegramAPIServer.from_base(telegram.base_url)),
        default=DefaultBotProperties(parse_mode=ParseMode.HTML),
    )
    try:
        progress = ProgressMessage(bot=bot, chat_id=5, clock=lambda: now[0])
        decision = StrategyDecision(strategy="deep", confidence=0.9, reason="a cause to find")
        await progress.update(StrategySelectedEvent(message="not shown", decision=decision))
        for step, advance in enumerate([0.0, 0.5, 0.5, 0.6, 0.1, 2.0]):
            now[0] += advance
            done = NodeCompletedEvent(message=f"{step}/6 checks <done>", node_id=f"c{step}")
            await progress.update(done)
        await progress.finish()
    finally:
        await bot.session.close()
    [status] = telegram.sent_messages(5)
    assert status.text == "🔎 0/6 checks &lt;done&gt;"
    # t=100 sent; t=101.0 (0.5+0.5) too early; t=101.6 edit; t=101.7 too early; t=103.7 edit
    assert [e.text for e in telegram.edits(5)] == [
        "🔎 3/6 checks &lt;done&gt;",
        "🔎 5/6 checks &lt;done&gt;",
    ]
    assert progress.edits == 2
    assert telegram.calls_of("deleteMessage")


async def test_the_editor_never_sends_an_edit_that_changes_nothing(
    telegram: FakeTelegramServer,
) -> None:
    now = [10.0]
    bot = Bot(
        TEST_TOKEN,
        session=AiohttpSession(api=TelegramAPIServer.from_base(telegram.base_url)),
        default=DefaultBotProperties(parse_mode=ParseMode.HTML),
    )
    try:
        editor = ThrottledEditor(bot, 6, min_interval=1.0, clock=lambda: now[0])
        assert await editor.show("a") and editor.started
        now[0] += 5
        assert not await editor.show("a"), "the same text: nothing to send"
        assert await editor.show("ab")
        now[0] += 0.2
        assert not await editor.show("abc"), "too soon: coalesced"
        await editor.settle("abc")  # the final text goes at once
        await editor.settle("abc")
        await editor.remove()
        assert not editor.started
    finally:
        await bot.session.close()
    assert [m.text for m in telegram.sent_messages(6)] == ["a"]
    assert [e.text for e in telegram.edits(6)] == ["ab", "abc"]
    assert editor.edits == 2
