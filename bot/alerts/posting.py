"""`AlertPosting`: what the alert flow needs of a chat front end, and its one error.

The receiver and the workers post reports and mark them resolved through this port;
Telegram's implementation is bot/telegram/alerts/poster.py. Another chat front end
(Slack, Mattermost) is another implementation: the alert flow does not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from reasoning_core import AlertAnalysis, Answer, PostedMessage


class AlertPostError(Exception):
    """No chat took the report (every send failed)."""


class AlertPosting(Protocol):
    async def post(
        self,
        analysis: AlertAnalysis,
        header: str,
        answer: Answer | None,
        *,
        chats: Sequence[int] | None = None,
    ) -> list[PostedMessage]:
        """The header (HTML, bot/alerts/words.py) and the report, if any, in every chat of
        the analysis (or in `chats` only); the header messages sent. A chat that refuses
        is skipped; `AlertPostError` when all do."""
        ...

    async def post_charts(
        self, analysis: AlertAnalysis, answer: Answer, *, chats: Sequence[int] | None = None
    ) -> None:
        """The report's chart, once the report is posted and recorded (never raises)."""
        ...

    async def mark_resolved(self, analysis: AlertAnalysis, at: datetime) -> int:
        """Mark the posted headers "resolved at …"; how many were marked."""
        ...
