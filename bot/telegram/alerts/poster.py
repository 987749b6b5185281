"""AlertPoster: an alert's report into its Telegram chats, and the "resolved" edit.

Every report starts with a short header message (the alert and its labels);
the analysis' report follows it. The header is what a resolved notification
edits, so the edit never has to fit a long report again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError

from bot.alerts.posting import AlertPostError
from bot.alerts.words import resolved_html
from bot.telegram.alerts.buttons import report_keyboard
from bot.telegram.replies.report_chart import ReportCharts
from bot.telegram.replies.sending import send_answer, send_html
from bot.trees.page.links import TreeLinks
from reasoning_core import AlertAnalysis, Answer, PostedMessage, report_of

log = logging.getLogger(__name__)


class AlertPoster:
    """`AlertPosting` in Telegram: HTML messages, the report's buttons, header edits."""

    def __init__(
        self,
        bot: Bot,
        *,
        links: TreeLinks | None = None,
        max_messages: int = 3,
        charts: ReportCharts | None = None,
    ) -> None:
        self._bot = bot
        self._charts = charts
        self._links = links
        self._max_messages = max_messages

    async def post(
        self,
        analysis: AlertAnalysis,
        header: str,
        answer: Answer | None,
        *,
        chats: Sequence[int] | None = None,
    ) -> list[PostedMessage]:
        """The header (and the report, if any) in every chat (or in `chats` only); the
        header messages sent.

        A chat that refuses is logged and skipped; `AlertPostError` when all do."""
        posted: list[PostedMessage] = []
        for chat_id in analysis.chats if chats is None else chats:
            try:
                [first, *_] = await send_html(
                    self._bot,
                    chat_id,
                    header,
                    max_messages=1,
                    reply_markup=report_keyboard(analysis.id, analysis.language),
                )
                posted.append(PostedMessage(chat_id=chat_id, message_id=first.message_id))
                if answer is not None:
                    await send_answer(
                        self._bot,
                        chat_id,
                        answer,
                        links=self._links,
                        max_messages=self._max_messages,
                    )
            except TelegramAPIError as e:
                log.error(
                    "could not post alert analysis %s to chat %s: %s", analysis.id, chat_id, e
                )
        if not posted:
            raise AlertPostError(f"no chat took the report of alert analysis {analysis.id}")
        return posted

    async def post_charts(
        self, analysis: AlertAnalysis, answer: Answer, *, chats: Sequence[int] | None = None
    ) -> None:
        """The report's chart in every chat (or in `chats`), once the report is posted and
        recorded (a chart never holds back the report or its record; failures are logged
        there)."""
        if self._charts is None:
            return
        report = report_of(answer)
        for chat_id in analysis.chats if chats is None else chats:
            await self._charts.send(self._bot, chat_id, answer, report)

    async def mark_resolved(self, analysis: AlertAnalysis, at: datetime) -> int:
        """Edit the posted headers with "resolved at …"; how many were edited."""
        text = resolved_html(analysis.report_html or "", at, analysis.language)
        edited = 0
        for message in analysis.messages:
            try:
                await self._bot.edit_message_text(
                    text, chat_id=message.chat_id, message_id=message.message_id
                )
                edited += 1
            except TelegramAPIError as e:
                log.warning(
                    "could not mark alert analysis %s resolved in chat %s: %s",
                    analysis.id,
                    message.chat_id,
                    e,
                )
        return edited
