"""TreeCharts: a report's chart as PNG, drawn off the event loop, within a timeout, cached
(and the chart an answer without a tree carries, `render_answer`).

Charts are cached per tree version like the tree picture (bot/trees/picture): the
key is a digest of the whole tree and the language. The whole draw, queueing
included, must finish within `timeout` seconds or `ChartError` says why; so does a
tree without a series to draw (its message is the line shown instead).
"""

from __future__ import annotations

import asyncio
import hashlib

from bot.trees.chart.drawing import draw_chart
from bot.trees.picture.cache import RenderCache
from bot.trees.picture.pictures import tree_version
from reasoning_core import AnswerChart, ChartData, Tree, answer_chart_data, chart_data


class ChartError(Exception):
    """No chart for this tree: nothing to draw, drawing failed or took too long."""


def chart_filename(tree_id: str) -> str:
    return f"chart-{tree_id}.png"


class TreeCharts:
    """Draws and caches report charts; `renders` counts draws actually run."""

    def __init__(self, *, timeout: float = 5.0, max_concurrent: int = 2, cache_size: int = 64):
        self.timeout = timeout
        self._slots = asyncio.Semaphore(max_concurrent)
        self._cache = RenderCache(cache_size)
        self.renders = 0

    async def render(self, tree: Tree, *, language: str = "en") -> bytes:
        """The chart's PNG; ChartError (its message says why) when there is none."""
        data = chart_data(tree, language)
        if isinstance(data, str):
            raise ChartError(data)
        return await self._drawn(("chart", tree.id, tree_version(tree), language), data, language)

    async def render_answer(self, chart: AnswerChart, *, language: str = "en") -> bytes:
        """The PNG of an answer's own chart (an answer without a tree), as `render`."""
        data = answer_chart_data(chart, language)
        if isinstance(data, str):
            raise ChartError(data)
        digest = hashlib.sha256(chart.model_dump_json().encode()).hexdigest()
        return await self._drawn(("answer-chart", digest, language), data, language)

    async def _drawn(self, key: tuple[str, ...], data: ChartData, language: str) -> bytes:
        try:
            async with asyncio.timeout(self.timeout):
                return await self._cache.get_or_make(key, lambda: self._draw(data, language))
        except TimeoutError:
            raise ChartError(f"the chart took longer than {self.timeout:g} s") from None
        except (ValueError, OverflowError, RuntimeError) as e:
            raise ChartError(f"the chart could not be drawn: {e}") from e

    async def _draw(self, data: ChartData, language: str) -> bytes:
        async with self._slots:
            self.renders += 1
            return await asyncio.to_thread(draw_chart, data, language)
