"""A quick answer streamed into one Telegram message while the model writes it.

`TelegramAnswerStream` is the reasoning core's `AnswerStream` for a chat, over a
`ThrottledEditor` (bot/telegram/replies/editor.py): the first text is sent at once as a new
message, later text edits it at most every `min_interval` seconds (Telegram allows
about one edit per second per chat), and an edit that would change nothing is never
sent. `finish` turns the message into the final answer (HTML with the confidence tag)
with one last edit; when the answer does not fit one message, needs buttons, or the
edit fails, the streamed message is removed and the answer is sent the ordinary way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError

from bot.telegram.replies.editor import ThrottledEditor
from bot.telegram.replies.rendering import escape, render_answer, split_html
from reasoning_core import Answer

log = logging.getLogger(__name__)

#: Seconds between edits of one streamed message.
EDIT_INTERVAL = 1.0
#: Characters of streamed text shown: one message, with room for escaping and the tag.
_MAX_STREAMED_CHARS = 3500
_CURSOR = " ▌"


class TelegramAnswerStream:
    """Shows the growing answer in one message; `finish` makes it the final answer."""

    def __init__(
        self,
        bot: Bot,
        chat_id: int,
        *,
        min_interval: float = EDIT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._chat_id = chat_id
        self._editor = ThrottledEditor(bot, chat_id, min_interval=min_interval, clock=clock)
        self._failed = False

    @property
    def started(self) -> bool:
        """A streamed message is in the chat."""
        return self._editor.started

    async def partial(self, text: str) -> None:
        if self._failed:
            return
        try:
            await self._editor.show(escape(text.strip()[:_MAX_STREAMED_CHARS]) + _CURSOR)
        except TelegramAPIError as e:  # streaming is a courtesy: the answer still follows
            log.warning("streaming the answer failed in chat %s: %s", self._chat_id, e)
            self._failed = True

    async def finish(self, answer: Answer) -> bool:
        """Make the streamed message the final answer; False when it must be sent anew
        (nothing streamed, or the answer needs more than one message or buttons)."""
        if not self._editor.started:
            return False
        html = render_answer(answer)
        if answer.clarification is None and len(split_html(html)) == 1 and not self._failed:
            try:
                await self._editor.settle(html)
            except TelegramAPIError as e:
                log.warning(
                    "could not finish the streamed answer in chat %s: %s", self._chat_id, e
                )
            else:
                return True
        try:
            await self._editor.remove()
        except TelegramAPIError as e:
            log.warning("could not remove the streamed answer in chat %s: %s", self._chat_id, e)
        return False
