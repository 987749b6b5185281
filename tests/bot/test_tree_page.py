"""The analysis page over real HTTP: what it shows, how it is protected, who gets a 404."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from benchmarks.tree_samples import XSS
from bot.trees.page.links import TOKEN_BYTES
from bot.trees.picture.dot_runner import find_dot
from storage.pool import create_pool
from tests.bot.page_site import PageSite, page_site

NOT_FOUND = "Not found."


@pytest.fixture
async def site(pool: asyncpg.Pool[Any]) -> AsyncIterator[PageSite]:
    async with page_site(pool) as running:
        yield running


async def fetch(url: str) -> tuple[int, dict[str, str], str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, dict(response.headers), await response.text()


def parsed(page: str) -> ET.Element:
    """The page as XML: it is written well-formed (void elements closed, entities escaped)."""
    assert page.startswith("<!DOCTYPE html>\n")
    return ET.fromstring(page.removeprefix("<!DOCTYPE html>\n"))


async def test_the_page_shows_report_tree_evidence_and_journal(site: PageSite) -> None:
    tree_id, url = await site.publish(12, "en")
    status, headers, page = await fetch(url)
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    html = parsed(page)
    assert html.get("lang") == "en" and html.find("head/title") is not None
    text = "".join(html.itertext())
    assert "Primary cause:" in text and "Availability outage" in text and tree_id in text
    details = html.findall(".//details")
    assert len(details) == 12 and [d.get("id") for d in details][:2] == ["node-0", "node-1"]
    assert "SELECT day, availability FROM cell_days WHERE cell = $1" in text  # the query
    cells = [td.text for td in html.iter("td")]
    assert "2024-05-06" in cells and "100" in cells  # the rows it saw, in a table
    assert "the previous plan failed" in text  # a rejected branch with its reason
    journal = [li for li in html.iter("li") if li.find("time") is not None]
    assert [li.find("b").text for li in journal] == ["reflection", "plan_revised"]  # type: ignore[union-attr]
    assert "<b>→ revise</b>" in text  # event text shown as text, not markup
    if find_dot() is not None:  # the tree inline, each box linking to its node's details
        svg = html.find(".//figure[@id='tree-picture']/{http://www.w3.org/2000/svg}svg")
        assert svg is not None
        assert 'xlink:href="#node-1"' in page
    else:
        assert html.find(".//pre[@id='tree-text']") is not None


async def test_every_response_carries_a_strict_policy(site: PageSite) -> None:
    _, url = await site.publish(12, "ru")
    for target in (url, site.base_url + "/t/" + "x" * 43):
        _, headers, _ = await fetch(target)
        policy = headers["Content-Security-Policy"]
        assert policy.startswith("default-src 'none'; style-src 'sha256-")
        assert "script-src" not in policy and "unsafe" not in policy  # no script can run
        assert (
            headers["Referrer-Policy"] == "no-referrer" and headers["Cache-Control"] == "no-store"
        )
    _, _, page = await fetch(url)
    assert parsed(page).get("lang") == "ru" and "Основная причина" in page


async def test_hostile_node_text_is_escaped_everywhere(site: PageSite) -> None:
    _, url = await site.publish(12, "en", hostile=True)
    _, _, page = await fetch(url)
    html = parsed(page)  # still well-formed: nothing broke out of its element
    assert (
        XSS not in page
        and "<script" not in page
        and "onerror=" not in page.replace("onerror=&#34;", "").replace("onerror=&quot;", "")
    )
    assert html.find(".//script") is None and html.find(".//img") is None
    assert XSS in "".join(html.itertext())  # shown, as text
    assert "\u202e" not in page  # no bidi override reverses what follows
    assert page.count("Длинное описание / long description.") == 80  # the description, whole


@pytest.mark.parametrize(
    "token",
    ["", "short", "x" * 43, "x" * 42 + "!", "a/b", "%2e%2e%2fetc", "A" * 500],
)
async def test_a_wrong_token_is_a_bare_404(site: PageSite, token: str) -> None:
    await site.publish(1)
    status, _, body = await fetch(f"{site.base_url}/t/{token}")
    assert (status, body) == (404, NOT_FOUND)


async def test_expired_revoked_or_deleted_links_are_the_same_404(
    site: PageSite, pool: asyncpg.Pool[Any]
) -> None:
    tree_id, url = await site.publish(1)
    _, other_url = await site.publish(1)
    token = url.rsplit("/", 1)[1]
    assert len(token) == 43 and TOKEN_BYTES * 8 >= 128  # 256 random bits
    stored = await pool.fetch("SELECT token_hash FROM tree_links")
    assert token.encode() not in [bytes(r["token_hash"]) for r in stored]  # only the hash
    assert (await fetch(url))[0] == 200
    assert await site.links.revoke(tree_id) == 1
    assert (await fetch(url))[:3:2] == (404, NOT_FOUND)
    assert (await fetch(other_url))[0] == 200  # other trees' links still work
    site.clock.advance(seconds=3601)
    assert (await fetch(other_url))[:3:2] == (404, NOT_FOUND)  # expired
    site.clock.advance(seconds=-3601)
    await pool.execute("DELETE FROM trees WHERE id <> $1", tree_id)
    assert (await fetch(other_url))[:3:2] == (404, NOT_FOUND)  # its tree is gone


async def test_without_graphviz_the_page_shows_the_text_tree(
    site: PageSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    _, url = await site.publish(12, "en")
    status, _, page = await fetch(url)
    html = parsed(page)
    assert status == 200 and html.find(".//{http://www.w3.org/2000/svg}svg") is None
    text_view = html.find(".//pre[@id='tree-text']")
    assert text_view is not None and "✅ h1 Availability outage" in (text_view.text or "")


async def test_a_database_outage_is_a_503_without_details(database_url: str) -> None:
    pool = await create_pool(database_url)
    async with page_site(pool) as site:
        _, url = await site.publish(1)
        await pool.close()
        status, _, body = await fetch(url)
    assert status == 503 and "try again later" in body and not re.search(r"pool|asyncpg", body)
