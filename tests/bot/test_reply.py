"""A reply is decided whole before it is sent: parts, buttons, page link, the file."""

from __future__ import annotations

from typing import Any

import asyncpg

from benchmarks.tree_samples import build_tree
from bot.telegram.replies.reply import ANSWER_FILENAME, answer_reply, html_reply, reply_to
from bot.trees.page import TreeLinks
from reasoning_core.models import Answer, Tree
from reasoning_core.tree.report import report_of
from storage.tree_pages import PgTreeLinkStore
from storage.trees import PgTreeStore


def _texts(markup: Any) -> list[str]:
    return [b.text for row in markup.inline_keyboard for b in row] if markup else []


def _report(tree: Tree | None = None) -> Answer:
    tree = tree or build_tree(12, "en")
    assert tree.synthesis is not None
    return Answer(strategy="deep", text="report", confidence=tree.synthesis.confidence,
                  tree_id=tree.id, synthesis=tree.synthesis)  # fmt: skip


def test_a_long_answer_is_cut_with_a_note_and_follows_as_a_file() -> None:
    html = "\n\n".join(f"paragraph {i} " * 40 for i in range(100))
    reply = html_reply(html, max_messages=2)
    assert len(reply.parts) == 2 and ANSWER_FILENAME in reply.parts[-1]
    assert reply.document is not None and b"paragraph 99" in reply.document.data
    assert html_reply("short").document is None


def test_a_report_with_a_page_link_keeps_buttons_without_it_for_a_refusal() -> None:
    answer = _report()
    linked = answer_reply(answer, page_url="https://whytree.example.org/t/abc")
    assert _texts(linked.buttons) == ["🌳 Show reasoning tree", "🌐 Open in browser"]
    assert _texts(linked.plain_buttons) == ["🌳 Show reasoning tree"]
    unlinked = answer_reply(answer)
    assert unlinked.page_url is None and unlinked.plain_buttons is None


async def test_the_page_link_is_taken_while_the_reply_is_built(pool: asyncpg.Pool[Any]) -> None:
    tree = build_tree(12, "en")
    await PgTreeStore(pool).create(tree)
    answer = _report(tree)
    links = TreeLinks(PgTreeLinkStore(pool), public_url="https://whytree.example.org", ttl_sec=60)
    reply = await reply_to(answer, report_of(answer), links=links)
    assert reply.page_url is not None and reply.page_url.startswith(
        "https://whytree.example.org/t/"
    )
    assert await pool.fetchval("SELECT count(*) FROM tree_links WHERE tree_id = $1", tree.id) == 1
