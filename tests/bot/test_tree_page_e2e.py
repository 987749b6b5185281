"""From a Telegram report to its page: with PUBLIC_URL set, a deep report links to
/t/{token} on the ops server, the page shows the real analysis, and /revoke_links ends it."""

from __future__ import annotations

import socket

import aiohttp
import pytest

from benchmarks.harness.polling_bot import harness_settings, running_bot
from bot.operations.server import serve_ops
from demo.dataset import example_questions, generate_demo
from demo.loader import load_demo
from fake_servers.telegram.server import FakeTelegramServer
from storage.pool import create_pool
from tests.bot.ops_helpers import ADMIN, say
from tests.bot.replies import buttons, wait_for_replies

CHAT = 961


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
async def outage_question(database_url: str) -> str:
    """The demo dataset loaded; a question about a cell with a known availability outage."""
    dataset = generate_demo(7)
    pool = await create_pool(database_url)
    try:
        await load_demo(pool, dataset)
    finally:
        await pool.close()
    return next(e.en for e in example_questions(dataset) if e.detail == "availability")


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.text()


async def test_a_report_links_to_its_page_until_an_admin_revokes_it(
    database_url: str, telegram: FakeTelegramServer, outage_question: str
) -> None:
    port = free_port()
    settings = harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=None,
        public_url=f"http://127.0.0.1:{port}", metrics_port=port, admin_ids=[ADMIN],
    )  # fmt: skip
    async with running_bot(settings, telegram) as bot:
        pages = bot.runtime.pages
        async with serve_ops(bot.runtime.ops, host="127.0.0.1", port=port, pages=pages):
            telegram.push_message(CHAT, outage_question)
            [report] = await wait_for_replies(telegram, CHAT, 1, seconds=30)
            [(tree_label, tree_data), (link_label, link)] = buttons(report)
            opened = await get(link)
            tree_id = tree_data.removeprefix("treepic:")
            revoked = await say(telegram, ADMIN, f"/revoke_links {tree_id}")
            after = await get(link)
            metrics = await get(f"http://127.0.0.1:{port}/metrics")
    assert tree_label.startswith("🌳") and link_label == "🌐 Open in browser"
    assert link.startswith(f"http://127.0.0.1:{port}/t/") and len(link.rsplit("/", 1)[1]) == 43
    status, page = opened
    assert status == 200 and tree_id in page and "availability outage" in page.lower()
    assert "<details" in page and "SELECT" in page and "<td" in page  # checks, SQL, rows
    assert "Revoked 1 link(s)" in revoked
    assert after == (404, "Not found.")
    assert metrics[0] == 200  # the ops server still serves its own endpoints
