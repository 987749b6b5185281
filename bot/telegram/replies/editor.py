"""One Telegram message that shows the latest text, edited at most every `min_interval` s.

Telegram allows about one edit per second per chat before flood limits. The first
text is sent as a new message; later texts edit it when `min_interval` has passed
since the last send or edit, and are coalesced otherwise (the latest text wins at
the next chance, or `settle` writes the last one). A text equal to the one shown is
never sent: Telegram would refuse the edit as "not modified" anyway. The live
progress (progress.py) and the streamed answer (streaming.py) are both this editor;
Telegram errors reach the caller, which decides what they cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from aiogram import Bot
from aiogram.types import Message


class ThrottledEditor:
    """Sends, then edits, one message of `chat_id`; `show` is throttled, `settle` is not."""

    def __init__(
        self,
        bot: Bot,
        chat_id: int,
        *,
        min_interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._bot = bot
        self._chat_id = chat_id
        self._min_interval = min_interval
        self._clock = clock
        self._message: Message | None = None
        self._shown = ""
        self._last = 0.0
        #: Edits sent so far (the first send is not an edit).
        self.edits = 0

    @property
    def started(self) -> bool:
        """The message is in the chat."""
        return self._message is not None

    @property
    def shown(self) -> str:
        """The text the message shows now ("" before it is sent)."""
        return self._shown

    async def show(self, html: str) -> bool:
        """Send or edit to `html` when allowed; False when it was coalesced (too soon after
        the last change, or nothing would change)."""
        if html == self._shown:
            return False
        now = self._clock()
        if self._message is None:
            self._message = await self._bot.send_message(self._chat_id, html)
        elif now - self._last >= self._min_interval:
            await self._message.edit_text(html)
            self.edits += 1
        else:
            return False
        self._shown, self._last = html, now
        return True

    async def settle(self, html: str) -> None:
        """Show `html` now, however recent the last edit (the final text); sends the message
        when there is none yet."""
        if self._message is None:
            await self.show(html)
            return
        if html == self._shown:
            return
        await self._message.edit_text(html)
        self.edits += 1
        self._shown, self._last = html, self._clock()

    async def remove(self) -> None:
        """Delete the message (the caller logs a failure); afterwards there is none."""
        message, self._message, self._shown = self._message, None, ""
        if message is not None:
            await message.delete()
