"""One live status message per question, edited at most every `min_interval` seconds
(the throttling is bot/telegram/replies/editor.py's `ThrottledEditor`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from aiogram import Bot
from aiogram.exceptions import ClientDecodeError, TelegramAPIError

from bot.delivery.context import transient
from bot.telegram.replies.editor import ThrottledEditor
from bot.telegram.replies.rendering import escape
from reasoning_core import Event

log = logging.getLogger(__name__)

#: Events worth a status line; the quick path shows only the typing action.
SHOWN_KINDS = frozenset(
    {
        "tree_created",
        "node_added",
        "node_completed",
        "node_rejected",
        "reflection",
        "plan_revised",
        "reasoning",
    }
)


class ProgressMessage:
    """The status line of one question: a `ThrottledEditor`, removed when the answer comes."""

    def __init__(
        self,
        *,
        bot: Bot,
        chat_id: int,
        min_interval: float = 1.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._chat_id = chat_id
        self._editor = ThrottledEditor(bot, chat_id, min_interval=min_interval, clock=clock)

    @property
    def edits(self) -> int:
        """Edits of the status message so far."""
        return self._editor.edits

    async def update(self, event: Event) -> None:
        if event.kind not in SHOWN_KINDS or not event.message:
            return
        text = f"🔎 {escape(event.message)}"
        try:
            with transient():  # a status line, not a reply: it is not kept in the outbox
                await self._editor.show(text)
        except (TelegramAPIError, ClientDecodeError) as e:  # a courtesy; never fail the answer
            log.warning("progress update failed in chat %s: %s", self._chat_id, e)

    async def finish(self) -> None:
        """Remove the status message: the answer follows as a new message."""
        try:
            await self._editor.remove()
        except TelegramAPIError as e:
            log.warning("could not delete the status message in chat %s: %s", self._chat_id, e)
