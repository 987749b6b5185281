"""One live status message per question, edited at most every `min_interval` seconds.

Telegram allows about one edit per second per chat before flood limits; edits
closer together than `min_interval` are coalesced, and the latest text wins.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from aiogram import Bot
from aiogram.exceptions import ClientDecodeError, TelegramAPIError
from aiogram.types import Message

from bot.delivery.context import transient
from bot.replies.rendering import escape
from reasoning_core.events import Event

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
    def __init__(
        self,
        *,
        bot: Bot,
        chat_id: int,
        min_interval: float = 1.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._bot = bot
        self._chat_id = chat_id
        self._min_interval = min_interval
        self._clock = clock
        self._message: Message | None = None
        self._shown = ""
        self._last_edit = 0.0
        self.edits = 0

    async def update(self, event: Event) -> None:
        if event.kind not in SHOWN_KINDS or not event.message:
            return
        text = f"🔎 {escape(event.message)}"
        try:
            with transient():  # a status line, not a reply: it is not kept in the outbox
                await self._show(text)
        except (TelegramAPIError, ClientDecodeError) as e:  # a courtesy; never fail the answer
            log.warning("progress update failed in chat %s: %s", self._chat_id, e)

    async def _show(self, text: str) -> None:
        if self._message is None:
            self._message = await self._bot.send_message(self._chat_id, text)
            self._shown, self._last_edit = text, self._clock()
        elif text != self._shown and self._clock() - self._last_edit >= self._min_interval:
            await self._message.edit_text(text)
            self._shown, self._last_edit = text, self._clock()
            self.edits += 1

    async def finish(self) -> None:
        """Remove the status message: the answer follows as a new message."""
        if self._message is None:
            return
        try:
            await self._message.delete()
        except TelegramAPIError as e:
            log.warning("could not delete the status message in chat %s: %s", self._chat_id, e)
        self._message = None
