"""`whytree bench tree`: how long a tree picture takes, by tree size, cold and cached.

For trees of 12, 40 and 500 nodes (`benchmarks.tree_samples`), each run uses a
fresh `TreePictures` (nothing cached) and times the DOT source, the SVG and the
PNG as the bot makes them (worker thread + `dot` subprocess), then the PNG again
from the cache. The median of `runs` runs is reported, with what was drawn: the
boxes (a 500-node tree is folded) and the PNG's size. The bot falls back to the
text view past TREE_PICTURE_TIMEOUT_SEC (4 s by default).

The report's chart (`TreeCharts`, matplotlib) is timed the same way on a tree
with a measured symptom: cold (a fresh cache) and cached, with its PNG's size.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from benchmarks.tree_samples import build_tree, with_symptom
from bot.trees.chart import TreeCharts
from bot.trees.picture import TreePictures
from bot.trees.picture.dot_source import tree_to_dot
from bot.trees.picture.pictures import png_size

SIZES = (12, 40, 500)


async def _once(size: int) -> dict[str, float]:
    tree = build_tree(size, "ru")
    pictures = TreePictures(timeout=60)
    started = time.perf_counter()
    source = tree_to_dot(tree, language="ru")
    dot_done = time.perf_counter()
    await pictures.render(tree, "svg", language="ru")
    svg_done = time.perf_counter()
    png = await pictures.render(tree, "png", language="ru")
    png_done = time.perf_counter()
    await pictures.render(tree, "png", language="ru")
    cached_done = time.perf_counter()
    width, height = png_size(png)
    return {
        "dot_ms": (dot_done - started) * 1000,
        "svg_ms": (svg_done - dot_done) * 1000,
        "png_ms": (png_done - svg_done) * 1000,
        "cached_ms": (cached_done - png_done) * 1000,
        "boxes": source.count(" [label=<"),
        "png_width": width,
        "png_height": height,
        "png_bytes": len(png),
    }


async def run_tree_bench(*, runs: int = 3) -> dict[str, Any]:
    """Median figures per tree size (keys: the sizes, as text)."""
    figures: dict[str, Any] = {}
    for size in SIZES:
        samples = [await _once(size) for _ in range(runs)]
        figures[str(size)] = {
            key: round(statistics.median(s[key] for s in samples), 2) for key in samples[0]
        }
    charts = [await _chart_once() for _ in range(runs)]
    chart = {key: round(statistics.median(c[key] for c in charts), 2) for key in charts[0]}
    return {"runs": runs, "sizes": figures, "chart": chart}


async def _chart_once() -> dict[str, float]:
    tree = with_symptom(build_tree(40, "ru"))
    charts = TreeCharts(timeout=60)
    started = time.perf_counter()
    png = await charts.render(tree, language="ru")
    cold = time.perf_counter()
    await charts.render(tree, language="ru")
    cached = time.perf_counter()
    width, height = png_size(png)
    return {
        "render_ms": (cold - started) * 1000,
        "cached_ms": (cached - cold) * 1000,
        "png_width": width,
        "png_height": height,
        "png_bytes": len(png),
    }


def format_tree_report(result: dict[str, Any]) -> str:
    lines = [
        f"Tree pictures (median of {result['runs']} runs; nothing cached but the last column)",
        f"{'nodes':>6} {'boxes':>6} {'DOT ms':>8} {'SVG ms':>8} {'PNG ms':>8} {'cached':>8}"
        f" {'PNG px':>12} {'PNG KB':>8}",
    ]
    for size, f in result["sizes"].items():
        pixels = f"{f['png_width']:.0f}x{f['png_height']:.0f}"
        kilobytes = f["png_bytes"] / 1024
        lines.append(
            f"{size:>6} {f['boxes']:>6.0f} {f['dot_ms']:>8.1f} {f['svg_ms']:>8.1f}"
            f" {f['png_ms']:>8.1f} {f['cached_ms']:>8.2f} {pixels:>12} {kilobytes:>8.0f}"
        )
    chart = result.get("chart")
    if chart:
        lines.append(
            f"Report chart: {chart['render_ms']:.1f} ms cold, {chart['cached_ms']:.2f} ms cached,"
            f" {chart['png_width']:.0f}x{chart['png_height']:.0f} px,"
            f" {chart['png_bytes'] / 1024:.0f} KB"
        )
    return "\n".join(lines)
