"""The analysis page in a real headless Chromium (Debian's chromium and chromium-driver,
driven by selenium): it renders, the tree is visible, the stylesheet passes the CSP, and no
script or markup from node text runs. One browser session for the module."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from benchmarks.tree_samples import XSS
from bot.trees.picture.dot_runner import find_dot
from tests.bot.page_site import PageSite, page_site

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="Chromium and chromium-driver are not installed: `make test` installs them as "
        "root with apt-get (a browser download of selenium's own cannot be fetched here)",
    ),
]
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1280,1600",
)  # fmt: skip


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
async def site(pool: asyncpg.Pool[Any]) -> AsyncIterator[PageSite]:
    async with page_site(pool) as running:
        yield running


async def in_browser(browser: webdriver.Chrome, script: str) -> Any:
    """Run `script` in the page (selenium blocks: off the loop that serves the page)."""
    return await asyncio.to_thread(browser.execute_script, script)


async def test_the_page_renders_with_its_tree_and_node_text_never_runs(
    browser: webdriver.Chrome, site: PageSite
) -> None:
    _, url = await site.publish(12, "en", hostile=True)
    await asyncio.to_thread(browser.get, url)
    assert browser.title.startswith("whytree · Why did traffic drop on cell 12345")
    assert await in_browser(browser, "return typeof window.pwned") == "undefined"
    assert await in_browser(browser, "return document.querySelectorAll('script, img').length") == 0
    summaries = browser.find_elements(By.CSS_SELECTOR, "details > summary")
    assert len(summaries) == 12 and XSS in summaries[1].text  # shown as text
    # the inline stylesheet is allowed by the CSP hash: the layout applies, nothing refused
    assert await in_browser(browser, "return getComputedStyle(document.body).maxWidth") == "1152px"
    log: list[dict[str, Any]] = browser.get_log("browser")  # type: ignore[no-untyped-call]
    errors = [e for e in log if e["level"] == "SEVERE"]
    assert errors == []
    # a node opens to its evidence: the query and the rows it saw, in a table
    check = browser.find_element(By.ID, "node-3")
    assert (
        check.get_attribute("open") is None
        and not check.find_element(By.TAG_NAME, "table").is_displayed()
    )
    await asyncio.to_thread(check.find_element(By.TAG_NAME, "summary").click)
    assert check.get_attribute("open") == "true"
    table = check.find_element(By.TAG_NAME, "table")
    assert table.is_displayed() and "2024-05-06" in table.text and "SELECT day" in check.text
    if find_dot() is None:
        pytest.skip("Graphviz (dot) is not installed: the page shows the text tree instead")
    picture = browser.find_element(By.CSS_SELECTOR, "#tree-picture svg")
    assert picture.is_displayed() and picture.size["width"] > 600 and picture.size["height"] > 200
    boxes = browser.find_elements(By.CSS_SELECTOR, "#tree-picture g.node")
    assert len(boxes) == 12 and all(box.is_displayed() for box in boxes)


async def test_the_page_opens_with_the_symptom_and_shows_the_chart(
    browser: webdriver.Chrome, site: PageSite
) -> None:
    _, url = await site.publish(12, "en", symptom=True)
    await asyncio.to_thread(browser.get, url)
    symptom = browser.find_element(By.ID, "symptom")
    assert symptom.text.startswith("Cell 12345 · traffic index −62% since ")
    chart = browser.find_element(By.CSS_SELECTOR, "#report-chart img")
    # the PNG decoded in the browser (a data: URI, allowed by the CSP) and is on screen
    assert (
        await in_browser(
            browser, "return document.querySelector('#report-chart img').naturalWidth"
        )
        == 900
    )
    assert chart.is_displayed() and chart.size["width"] > 600 and chart.size["height"] > 300
    log: list[dict[str, Any]] = browser.get_log("browser")  # type: ignore[no-untyped-call]
    assert [e for e in log if e["level"] == "SEVERE"] == []
    # a tree that measured no series says why in one line, with no image
    _, plain = await site.publish(12, "en")
    await asyncio.to_thread(browser.get, plain)
    note = browser.find_element(By.ID, "no-chart")
    assert note.text == "no chart: this analysis measured no time series"
