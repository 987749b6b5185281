"""Tree pictures: Graphviz renders real trees of 1, 12, 40 and 500 nodes, hostile text, failures.

Every picture goes through the real `dot` program (Debian's graphviz package,
installed by `make test` when missing); only without it are these skipped.
"""

from __future__ import annotations

import asyncio
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from benchmarks.tree_samples import build_tree
from bot.trees.picture import RenderError, TreePictures, fits_telegram_photo
from bot.trees.picture.dot_runner import PNG_DPI, find_dot
from bot.trees.picture.folding import MAX_NODES
from bot.trees.picture.pictures import png_size
from bot.trees.picture.text import clean

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(
    find_dot() is None,
    reason="Graphviz (dot) is not installed: `make test` installs it as root with apt-get",
)


def svg_texts(svg: bytes) -> tuple[ET.Element, list[str]]:
    """The parsed SVG (so: valid XML) and the text of every <text> element, in order."""
    root = ET.fromstring(svg)
    return root, [t.text or "" for t in root.iter(f"{SVG}text")]


def drawn_nodes(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]


@needs_dot
@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("size", [1, 12, 40])
async def test_a_tree_is_drawn_whole_as_valid_svg_and_a_photo_sized_png(
    size: int, language: str
) -> None:
    tree = build_tree(size, language)
    pictures = TreePictures(timeout=30)
    svg = await pictures.render(tree, "svg", language=language)
    root, texts = svg_texts(svg)
    assert len(drawn_nodes(root)) == size  # every node, nothing folded
    joined = " ".join(texts)
    for node in tree.nodes.values():  # every label: its title, and its id and verdict
        assert clean(node.title) in joined, node.title
        if node.node_type != "root":
            assert any(t.startswith(f"{node.id} · ") for t in texts), node.id
    words = ("confirmed", "refuted") if language == "en" else ("подтверждено", "опровергнуто")
    assert words[0] in joined and (size < 40 or words[1] in joined)
    png = await pictures.render(tree, "png", language=language)
    width, height = png_size(png)
    points = [float(re.sub(r"[^0-9.]", "", root.get(side, "0"))) for side in ("width", "height")]
    # drawn at full scale (12 pt text stays 18 px), not shrunk to fit: readable
    assert width == pytest.approx(points[0] * PNG_DPI / 72, abs=3)
    assert height == pytest.approx(points[1] * PNG_DPI / 72, abs=3)
    assert fits_telegram_photo(png) and width >= 150 and height >= 60


@needs_dot
async def test_the_winning_path_and_the_rejected_branch_are_marked() -> None:
    tree = build_tree(12, "en")
    root, texts = svg_texts(await TreePictures(timeout=30).render(tree, "svg"))
    edges = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    bold_green = [
        e for e in edges for p in e.iter(f"{SVG}path")
        if p.get("stroke") == "#1b5e20" and p.get("stroke-width") == "3"
    ]  # fmt: skip
    confirming = [n for n in tree.nodes.values() if n.parent_id == "h1" and n.result is not None]
    assert len(confirming) == 4 and all(n.result and n.result.confirmed for n in confirming)
    assert len(edges) == 11 and len(bold_green) == 1 + 4  # root -> h1, h1 -> its confirmations
    joined = " ".join(texts)
    assert "h2 · ⊘ rejected · 0.00" in texts and "the previous plan failed: its checks" in joined
    edge_labels = {t.strip() for t in texts}
    assert {"+0.85", "−0.85", "±0", "1.00", "0.00"} <= edge_labels  # confidences on edges
    assert "availability 0% vs 100%, 44 h" in texts  # a check's key number under it


@needs_dot
async def test_hostile_node_text_stays_text_and_short() -> None:
    tree = build_tree(12, "en", hostile=True)
    svg = await TreePictures(timeout=30).render(tree, "svg")
    root, texts = svg_texts(svg)  # valid XML despite the markup in the labels
    tags = {element.tag.removeprefix(SVG) for element in root.iter()}
    assert not tags & {"script", "img", "foreignObject", "iframe"}
    assert not [a for e in root.iter() for a in e.attrib if a.lower().startswith("on")]
    joined = " ".join(texts)
    assert "<script>window.pwned=1</script>" in joined  # shown as text, escaped in the file
    assert b"<script>" not in svg and b"&lt;script&gt;" in svg
    assert "🔥" in joined and "שלום" in joined and "\u202e" not in joined
    assert max(len(t) for t in texts) <= 50  # the 3,000-character description is not drawn
    assert "long description" not in joined


@needs_dot
async def test_a_500_node_tree_is_folded_and_drawn_within_the_default_timeout() -> None:
    tree = build_tree(500, "en")
    pictures = TreePictures()  # the bot's default timeout
    svg = await pictures.render(tree, "svg")
    root, texts = svg_texts(svg)
    nodes = drawn_nodes(root)
    folds = [t for t in texts if re.fullmatch(r"\+\d+ more", t)]
    assert folds and len(nodes) <= MAX_NODES + len(folds)
    hidden = sum(int(t[1:].split()[0]) for t in folds)
    assert len(nodes) - len(folds) + hidden == 500  # nothing lost: drawn or counted
    assert any(t.startswith("h1 · ") for t in texts)  # the winner is always drawn
    assert fits_telegram_photo(await pictures.render(tree, "png"))


@needs_dot
async def test_pictures_are_cached_per_tree_version_and_shared_while_drawn() -> None:
    tree = build_tree(12, "ru")
    pictures = TreePictures(timeout=30)
    first = await asyncio.gather(*(pictures.render(tree, "png", language="ru") for _ in range(3)))
    assert pictures.renders == 1 and first[0] == first[1] == first[2]
    assert await pictures.render(tree, "png", language="ru") == first[0]
    assert pictures.renders == 1
    tree.nodes["h1"].title = "Авария (ещё раз)"  # a new version of the tree
    changed = await pictures.render(tree, "png", language="ru")
    assert pictures.renders == 2 and changed != first[0]


async def test_graphviz_missing_failing_or_hanging_is_a_render_error(tmp_path: Path) -> None:
    tree = build_tree(1)
    rootless = build_tree(12).model_copy(update={"nodes": {}})
    with pytest.raises(RenderError, match=r"cannot be drawn: tree \w+ has no root node"):
        await TreePictures().render(rootless, "svg")
    missing = TreePictures(program=str(tmp_path / "no-dot"))
    assert not missing.available
    with pytest.raises(RenderError, match="Graphviz is not installed"):
        await missing.render(tree, "png")
    crashing = tmp_path / "crashing-dot"
    crashing.write_text("#!/bin/sh\necho 'Error: <stdin>: syntax error in line 1' >&2\nexit 1\n")
    crashing.chmod(0o755)
    with pytest.raises(RenderError, match="Graphviz failed: Error: <stdin>: syntax error"):
        await TreePictures(program=str(crashing)).render(tree, "svg")
    hanging = tmp_path / "hanging-dot"
    hanging.write_text(f"#!/bin/sh\necho $$ > {tmp_path / 'pid'}\nexec sleep 30\n")
    hanging.chmod(0o755)
    with pytest.raises(RenderError, match=r"longer than 0\.5 s"):
        await TreePictures(program=str(hanging), timeout=0.5).render(tree, "svg")
    process = Path(f"/proc/{(tmp_path / 'pid').read_text().strip()}")
    for _ in range(600):  # the hanging `dot` is killed at its deadline, not left running
        if not process.exists():  # noqa: ASYNC240
            break
        await asyncio.sleep(0.05)
    assert not process.exists()  # noqa: ASYNC240
