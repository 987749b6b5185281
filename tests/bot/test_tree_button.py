"""The report's tree button through the fake Telegram server: a picture for the owner, the
text view one tap away, "not available" for anyone else, and the text view whenever the
picture cannot be made or sent."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from benchmarks.harness.polling_bot import TEST_TOKEN, harness_settings, running_bot
from benchmarks.tree_samples import build_tree
from bot.telegram.replies.report_html import TreePictureCallback
from bot.telegram.replies.sending import send_answer
from bot.telegram.replies.tree_photo import send_tree_picture
from bot.trees.page import TreeLinks
from bot.trees.picture import TreePictures
from bot.trees.picture.dot_runner import find_dot
from bot.trees.picture.pictures import png_size
from fake_servers.telegram.server import FakeTelegramServer
from reasoning_core.models import Answer, Tree
from storage.pool import create_pool
from storage.tree_pages import PgTreeLinkStore
from storage.trees import PgTreeStore
from tests.bot.replies import buttons

OWNER = 8801
STRANGER = 8802
NOT_AVAILABLE = "That reasoning tree is not available."
needs_dot = pytest.mark.skipif(
    find_dot() is None,
    reason="Graphviz (dot) is not installed: `make test` installs it as root with apt-get",
)


@pytest.fixture
async def tree(database_url: str) -> Tree:
    """A finished 12-node analysis of OWNER's, saved in the test database."""
    built = build_tree(12, "en", user_id=OWNER, chat_id=OWNER)
    pool = await create_pool(database_url)
    try:
        await PgTreeStore(pool).create(built)
    finally:
        await pool.close()
    return built


def press(telegram: FakeTelegramServer, user_id: int, data: str) -> None:
    telegram.push_callback(OWNER, user_id, data, message_id=1)


@needs_dot
async def test_the_owner_gets_a_photo_and_the_text_view_one_tap_away(
    database_url: str, telegram: FakeTelegramServer, tree: Tree
) -> None:
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        press(telegram, STRANGER, TreePictureCallback(tid=tree.id).pack())
        press(telegram, OWNER, TreePictureCallback(tid="no-such-tree").pack())
        press(telegram, OWNER, TreePictureCallback(tid=tree.id).pack())
        await telegram.wait_for(lambda: bool(telegram.sent_photos(OWNER)), timeout=60)
        [photo] = telegram.sent_photos(OWNER)
        [(label, data)] = buttons(photo)
        press(telegram, OWNER, data)
        [text_view] = await telegram.wait_for_messages(OWNER, 1)
    notices = [c.params.get("text") for c in telegram.callback_answers]
    assert notices.count(NOT_AVAILABLE) == 2 and len(notices) == 4  # stranger, forged id
    assert len(telegram.sent_photos()) == 1  # nothing was sent for the other two presses
    width, height = png_size(photo.params["photo"].data)
    assert (width, height) == (photo.result["photo"][0]["width"], height) and width > 500
    assert photo.caption.startswith("🌳 <b>Primary cause:</b> Availability outage (")
    assert label == "📝 Text view"
    assert "<pre>" in text_view.params["text"] and "✅ h1 Availability outage" in text_view.text


@pytest.fixture
def no_graphviz(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere


@pytest.mark.usefixtures("no_graphviz")
async def test_without_graphviz_the_button_sends_the_text_view(
    database_url: str, telegram: FakeTelegramServer, tree: Tree, caplog: pytest.LogCaptureFixture
) -> None:
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    with caplog.at_level(logging.WARNING):
        async with running_bot(settings, telegram):
            press(telegram, OWNER, TreePictureCallback(tid=tree.id).pack())
            [text_view] = await telegram.wait_for_messages(OWNER, 1)
    assert "<pre>" in text_view.params["text"] and "h1 Availability outage" in text_view.text
    assert not telegram.sent_photos()
    lines = [r.getMessage() for r in caplog.records if "picture not sent" in r.getMessage()]
    assert len(lines) == 1 and "Graphviz is not installed" in lines[0]


@needs_dot
async def test_a_photo_telegram_refuses_falls_back_to_the_text_view(
    database_url: str, telegram: FakeTelegramServer, tree: Tree
) -> None:
    telegram.fail_next("sendPhoto", 400, description="Bad Request: PHOTO_INVALID_DIMENSIONS")
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        press(telegram, OWNER, TreePictureCallback(tid=tree.id).pack())
        [text_view] = await telegram.wait_for_messages(OWNER, 1)
    assert "<pre>" in text_view.params["text"] and not telegram.sent_photos()


@pytest.fixture
async def bot(telegram: FakeTelegramServer) -> AsyncIterator[Bot]:
    session = AiohttpSession(api=TelegramAPIServer.from_base(telegram.base_url))
    bot = Bot(token=TEST_TOKEN, session=session, default=DefaultBotProperties(parse_mode="HTML"))
    yield bot
    await bot.session.close()


@pytest.mark.slow
@needs_dot
async def test_a_picture_too_big_for_a_photo_goes_as_an_svg_document(
    telegram: FakeTelegramServer, bot: Bot
) -> None:
    tree = build_tree(40, "ru")
    sharp = TreePictures(timeout=30, png_dpi=400)  # 40 nodes at 400 dpi: over 10,000 px
    assert await send_tree_picture(bot, 77, tree, sharp)
    assert not telegram.sent_photos(77)
    [document] = telegram.sent_documents(77)
    upload = document.params["document"]
    assert upload.filename == f"tree-{tree.id}.svg" and b"</svg>" in upload.data
    assert document.caption.startswith("🌳 <b>Основная причина:</b> Авария")
    assert buttons(document) == [("📝 Текстом", f"tree:{tree.id}:0:0")]


async def test_a_report_links_its_page_and_survives_a_refused_link_button(
    telegram: FakeTelegramServer,
    bot: Bot,
    pool: asyncpg.Pool[Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    tree = build_tree(12, "en")
    await PgTreeStore(pool).create(tree)
    links = TreeLinks(PgTreeLinkStore(pool), public_url="https://whytree.example.org", ttl_sec=60)
    assert tree.synthesis is not None
    answer = Answer(strategy="deep", text="report", confidence=tree.synthesis.confidence,
                    tree_id=tree.id, synthesis=tree.synthesis)  # fmt: skip
    await send_answer(bot, 91, answer, links=links)
    [(_, picture), (browser, url)] = buttons(telegram.sent_messages(91)[0])
    assert picture == f"treepic:{tree.id}" and browser == "🌐 Open in browser"
    assert url.startswith("https://whytree.example.org/t/")
    telegram.fail_next("sendMessage", 400, description="Bad Request: BUTTON_URL_INVALID")
    with caplog.at_level(logging.WARNING):
        await send_answer(bot, 92, answer, links=links)
    [report] = telegram.sent_messages(92)  # sent again, with the tree button alone
    assert buttons(report) == [("🌳 Show reasoning tree", f"treepic:{tree.id}")]
    assert "Primary cause" in report.text
    assert any("check PUBLIC_URL" in r.getMessage() for r in caplog.records)
