"""A deep report's chart in Telegram: a photo sent right after the report's text (and so
is the chart an answer without a tree carries: the change scan's candidates).

The chart never delays the report: it is drawn after the text went out, within
`TreeCharts.timeout`; when there is nothing to draw, drawing fails or is too slow,
or Telegram refuses the photo, the report stands alone and one log line says why.
The photo's caption is the report's first line (the symptom), so it reads alone.
"""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import BufferedInputFile, Message

from bot.telegram.replies.rendering import escape
from bot.trees.chart import ChartError, TreeCharts, chart_filename
from reasoning_core import Answer, AnswerChart, Report, StoreError, TreeStore

log = logging.getLogger(__name__)

_CAPTION_CHARS = 1000  # Telegram takes 1,024


class ReportCharts:
    """Sends the chart of a deep report; the tree comes from `trees`, the PNG from `charts`."""

    def __init__(self, *, charts: TreeCharts, trees: TreeStore) -> None:
        self.charts = charts
        self._trees = trees

    async def send(
        self, bot: Bot, chat_id: int, answer: Answer, report: Report | None
    ) -> Message | None:
        """The chart as a photo after the report (`report`: `report_of(answer)`); None (and
        one log line) when not sent."""
        if answer.chart is not None and not answer.tree_id:
            return await self._send_own(bot, chat_id, answer, answer.chart)
        if report is None or not answer.tree_id:
            return None
        try:
            tree = await self._trees.load(answer.tree_id)
            png = await self.charts.render(tree, language=answer.language)
            caption = escape(report.symptom or "")[:_CAPTION_CHARS] or None
            upload = BufferedInputFile(png, filename=chart_filename(answer.tree_id))
            return await bot.send_photo(chat_id, upload, caption=caption)
        except (ChartError, StoreError, TelegramAPIError) as e:
            log.warning("tree %s: report sent without its chart: %s", answer.tree_id, e)
            return None

    async def _send_own(
        self, bot: Bot, chat_id: int, answer: Answer, chart: AnswerChart
    ) -> Message | None:
        """The chart an answer without a tree carries (the change scan's candidates), its
        title as the caption."""
        try:
            png = await self.charts.render_answer(chart, language=answer.language)
            upload = BufferedInputFile(png, filename="chart.png")
            caption = escape(chart.title)[:_CAPTION_CHARS] or None
            return await bot.send_photo(chat_id, upload, caption=caption)
        except (ChartError, TelegramAPIError) as e:
            log.warning("an answer sent without its chart: %s", e)
            return None
