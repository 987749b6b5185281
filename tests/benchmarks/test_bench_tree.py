"""`bench tree` with one run: its keys, and figures that say what was drawn."""

from __future__ import annotations

import pytest

from benchmarks.tree_pictures import SIZES, format_tree_report, run_tree_bench
from bot.trees.picture.dot_runner import find_dot
from bot.trees.picture.folding import MAX_NODES

pytestmark = pytest.mark.slow

KEYS = {"dot_ms", "svg_ms", "png_ms", "cached_ms", "boxes", "png_width", "png_height", "png_bytes"}


@pytest.mark.skipif(find_dot() is None, reason="Graphviz (dot) is not installed")
async def test_bench_reports_each_size_cold_and_cached() -> None:
    result = await run_tree_bench(runs=1)
    assert result["runs"] == 1 and list(result["sizes"]) == [str(s) for s in SIZES]
    small, large = result["sizes"]["12"], result["sizes"]["500"]
    assert all(set(f) == KEYS for f in result["sizes"].values())
    assert small["boxes"] == 12 and large["boxes"] <= 2 * MAX_NODES  # drawn whole / folded
    assert all(f["png_ms"] > f["cached_ms"] and f["png_bytes"] > 0 for f in (small, large))
    report = format_tree_report(result)
    assert "Tree pictures" in report and "   500 " in report
