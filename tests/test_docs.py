"""The README stays a front door and the docs stay one connected set of pages.

The README is short and readable in a terminal; every relative link in it and in docs/
leads to a file (and heading) of this repository, none leaves it; every docs page can be
reached from the README and from the architecture map, so nothing written there is orphaned.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
MAP = DOCS / "architecture.md"
PAGES = sorted(DOCS.glob("*.md"))

README_MAX_LINES = 170
MAX_LINE = 120

MARKDOWN = MarkdownIt("commonmark").enable("table")


def tokens_of(path: Path) -> list[Token]:
    """Block tokens followed by their inline children, in document order."""
    flat: list[Token] = []
    for token in MARKDOWN.parse(path.read_text(encoding="utf-8")):
        flat.append(token)
        flat.extend(token.children or [])
    return flat


def links_of(path: Path) -> list[str]:
    """Targets of every link and image, code spans and code blocks excluded."""
    targets: list[str] = []
    for token in tokens_of(path):
        if token.type == "link_open":
            targets.append(str(token.attrs["href"]))
        elif token.type == "image":
            targets.append(str(token.attrs["src"]))
    return targets


def relative_links(path: Path) -> list[str]:
    """Links that point into the repository rather than at a URL or an address."""
    return [link for link in links_of(path) if not urlsplit(link).scheme]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors_of(path: Path) -> set[str]:
    """The anchors GitHub makes for a page's headings (repeats get -1, -2, …)."""
    anchors: set[str] = set()
    seen: Counter[str] = Counter()
    tokens = MARKDOWN.parse(path.read_text(encoding="utf-8"))
    for heading, inline in pairwise(tokens):
        if heading.type != "heading_open":
            continue
        text = "".join(child.content for child in inline.children or [])
        base = slug(text)
        anchors.add(base if seen[base] == 0 else f"{base}-{seen[base]}")
        seen[base] += 1
    return anchors


def exempt_lines(path: Path) -> set[int]:
    """Line numbers (0-based) inside code blocks and tables, where long lines are content."""
    lines: set[int] = set()
    for token in MARKDOWN.parse(path.read_text(encoding="utf-8")):
        if token.type in {"fence", "code_block", "table_open"} and token.map:
            lines.update(range(*token.map))
    return lines


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES


def test_readme_lines_are_wrapped() -> None:
    exempt = exempt_lines(README)
    long_lines = [
        f"README.md:{number + 1}: {len(line)} characters"
        for number, line in enumerate(README.read_text(encoding="utf-8").splitlines())
        if len(line) > MAX_LINE and number not in exempt and "://" not in line
    ]
    assert long_lines == []


def test_readme_keeps_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert "make run" in text
    assert "make test" in text


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.name)
def test_every_relative_link_resolves_inside_the_repository(page: Path) -> None:
    broken: list[str] = []
    for link in relative_links(page):
        parts = urlsplit(link)
        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not target.is_relative_to(REPO):
            broken.append(f"{link}: outside the repository")
        elif not target.exists():
            broken.append(f"{link}: no such file")
        elif (
            parts.fragment and target.suffix == ".md" and parts.fragment not in anchors_of(target)
        ):
            broken.append(f"{link}: no such heading")
    assert broken == []


def test_every_page_has_links() -> None:
    """The link reader really reads links: the README links every page of docs/."""
    assert len(relative_links(README)) >= len(PAGES)


def linked_pages(page: Path) -> set[Path]:
    return {
        (page.parent / urlsplit(link).path).resolve()
        for link in relative_links(page)
        if urlsplit(link).path
    }


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = linked_pages(README)
    assert [p.name for p in PAGES if p.resolve() not in linked] == []


def test_every_docs_page_is_linked_from_the_architecture_map() -> None:
    linked = linked_pages(MAP)
    assert [p.name for p in PAGES if p != MAP and p.resolve() not in linked] == []
