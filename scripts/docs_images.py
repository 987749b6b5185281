"""Make the pictures of README.md and docs/telegram.md: docs/images/tree.png and tree-page.png.

    .venv/bin/python scripts/docs_images.py

A 12-node analysis with a revised plan, grown with the real tree edits; its
picture is drawn by Graphviz, and its analysis page is rendered by the bot's own
code and photographed in headless Chromium (Debian's chromium and
chromium-driver, as in the browser tests) with one node opened to its evidence.
"""

from __future__ import annotations

import asyncio
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from bot.trees.page.page import PageInput, render_page
from bot.trees.picture import TreePictures
from reasoning_core.models import Evidence, Node, NodeType, Tree
from reasoning_core.ports import TreeEvent
from reasoning_core.tree.edits import NewNode, add_node, close_node, set_result
from reasoning_core.tree.synthesis import synthesize

IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"
T0 = datetime(2025, 3, 3, 9, 14, tzinfo=UTC)
OUTAGE_HOUR = 2
SQL = "SELECT day, hour, availability FROM demo.cell_hours WHERE cellname = $1 ORDER BY 1, 2"


def _add(tree: Tree, parent: str, title: str, kind: NodeType, **fields: Any) -> Node:
    at = T0 + timedelta(seconds=3 * len(tree.nodes))
    node, _ = add_node(
        tree, NewNode(parent, title, kind, title=title, **fields), max_depth=5, now=at
    )
    return node


def _check(
    tree: Tree, parent: str, title: str, found: tuple[bool | None, float, str], *,
    rows: list[list[str]] | None = None,
) -> Node:  # fmt: skip
    context = {"tool": "sql", "query": SQL, "params": ["10291"]}
    node = _add(tree, parent, title, "verification", context=context)
    seen = {"columns": ["day", "hour", "availability"], "rows": rows or [], "row_count": 44}
    verdict, strength, text = found
    evidence = Evidence(confirmed=verdict, confidence=strength, text=text, has_data=True,
                        data={"rows": 44, "seen": seen} if rows else {})  # fmt: skip
    set_result(tree, node.id, evidence)
    return node


def analysis() -> tuple[Tree, list[TreeEvent]]:
    """12 nodes: a winner with two confirming checks, refuted rivals, a failed first plan."""
    question = "Why did traffic drop on cell 10291 since Monday?"
    root = Node(id="root", tree_id="5e7a1c0d9b42", node_type="root", status="in_progress",
                title=question, description=question, created_at=T0, updated_at=T0)  # fmt: skip
    tree = Tree(id=root.tree_id, task=question, user_id=1, chat_id=1, nodes={"root": root},
                created_at=T0)  # fmt: skip
    outage = _add(tree, "root", "Availability outage", "hypothesis", prior=0.4)
    reset = _add(tree, "root", "Counters were reset", "hypothesis", prior=0.3)
    failed = _add(tree, reset.id, "Was the reset flag set on Monday?", "verification")
    close_node(tree, failed.id, "rejected", 'sql missing: column "reset_flag" does not exist')
    tree.revision = 1
    close_node(tree, reset.id, "rejected", "set aside by plan revision 1: its only check failed")
    rows = [["2025-03-03", f"{h:02d}", "99.8" if h < OUTAGE_HOUR else "0.0"] for h in range(6)]
    _check(tree, outage.id, "Did the cell's availability fall?",
           (True, 0.8, "availability 0% vs 100% baseline (−100 pp, 44 h)"), rows=rows)  # fmt: skip
    _check(tree, outage.id, "Any critical alarms on the site?",
           (True, 0.5, "3 critical alarms (CELL_DOWN) since Mon 02:10"))  # fmt: skip
    demand = _add(tree, "root", "Lower demand in the area", "hypothesis", prior=0.4)
    _check(tree, demand.id, "Did the site and its neighbours lose traffic too?",
           (False, 0.9, "site and neighbours +1.2% vs cell −97% (8 peers)"))  # fmt: skip
    _check(tree, demand.id, "Did call attempts on the cell fall?",
           (None, 0.3, "attempts index 0.00: no service, the counters are empty"))  # fmt: skip
    moved = _add(tree, "root", "Traffic moved to neighbouring cells", "hypothesis", prior=0.3)
    _check(tree, moved.id, "Did the neighbours gain the lost traffic?",
           (False, 0.85, "neighbours gained 4% of what the cell lost"))  # fmt: skip
    spare = _add(tree, moved.id, "Did handovers to the neighbours rise?", "verification")
    close_node(tree, spare.id, "pruned", f"{moved.id} is strongly contradicted (0.07)")
    tree.status, root.status = "completed", "completed"
    tree.synthesis = synthesize(tree)
    events = [
        TreeEvent(kind="reflection", created_at=T0 + timedelta(seconds=20),
                  message="Reflection (check failed): revise the plan — check h2.v1 (Was the "
                  'reset flag set on Monday?) failed: column "reset_flag" does not exist'),
        TreeEvent(kind="plan_revised", created_at=T0 + timedelta(seconds=21),
                  message="Plan revised (1): the previous attempt failed because h2's only "
                  "check failed; new: Lower demand in the area, Traffic moved to neighbouring "
                  "cells"),
    ]  # fmt: skip
    return tree, events


def screenshot(html: str, target: Path) -> None:
    """The page in headless Chromium, one check opened to its evidence."""
    with tempfile.TemporaryDirectory() as scratch:
        page = Path(scratch) / "page.html"
        page.write_text(html, encoding="utf-8")
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--hide-scrollbars", "--window-size=1200,2600",
                     f"--user-data-dir={scratch}/profile"):  # fmt: skip
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(page.as_uri())
            driver.find_element(By.CSS_SELECTOR, "#node-4 > summary").click()
            height = driver.execute_script("return document.documentElement.scrollHeight")
            driver.set_window_size(1200, int(height) + 40)
            driver.save_screenshot(str(target))
        finally:
            driver.quit()


async def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    tree, events = analysis()
    assert len(tree.nodes) == 12  # noqa: PLR2004 - the README shows a 12-node analysis
    pictures = TreePictures(timeout=30)
    (IMAGES / "tree.png").write_bytes(await pictures.render(tree, "png"))
    svg = await pictures.render(tree, "svg", links=True)
    now = T0 + timedelta(minutes=3)
    html = render_page(
        PageInput(tree=tree, events=events, svg=svg, language="en", generated_at=now)
    )
    screenshot(html, IMAGES / "tree-page.png")
    print(f"wrote {IMAGES / 'tree.png'} and {IMAGES / 'tree-page.png'}")  # noqa: T201


if __name__ == "__main__":
    asyncio.run(main())
