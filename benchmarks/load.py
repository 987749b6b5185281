"""Chat load through the fake Telegram server: N chats, M questions each, latencies recorded.

A reply may be streamed: the bot sends a message with the first words and edits it
until the final text. Two latencies per question, from the update being queued:
to the first message (the first token the user sees) and to the final text.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from fake_servers.telegram.server import FakeTelegramServer, RecordedCall

_REPLY_METHODS = frozenset({"sendmessage", "editmessagetext"})


@dataclass(frozen=True, slots=True)
class LoadFigures:
    messages: int
    wall_s: float
    latencies_ms: list[float]
    first_token_ms: list[float]

    @property
    def msgs_per_s(self) -> float:
        return self.messages / self.wall_s if self.wall_s else 0.0

    def percentile(self, q: float) -> float:
        """The q-th percentile (0..100) of end-to-end latency, in ms."""
        return _percentile(self.latencies_ms, q)

    def first_token_percentile(self, q: float) -> float:
        """The q-th percentile (0..100) of the time to the first words shown, in ms."""
        return _percentile(self.first_token_ms, q)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[int(q) - 1]


async def drive_chats(
    telegram: FakeTelegramServer,
    *,
    chats: int,
    questions: int,
    final: Callable[[str], bool],
    question: Callable[[int, int], str],
    reply_timeout: float = 60.0,
    chat_base: int = 10_000,
) -> LoadFigures:
    """Each chat asks its questions one after another; chats run concurrently.

    `question(chat_id, number)` is the text asked; `final(text)` tells the reply's final
    text (a sent message or an edit) from the streamed ones before it.
    """
    latencies: list[float] = []
    first_tokens: list[float] = []

    async def one_chat(chat_id: int) -> None:
        for number in range(questions):
            replies = _Replies(telegram, chat_id, start=len(telegram.calls))
            queued = time.monotonic()
            telegram.push_message(chat_id, question(chat_id, number))
            await telegram.wait_for(partial(replies.read, final), reply_timeout, chat_id=chat_id)
            first_tokens.append((replies.seen[0].at - queued) * 1000)
            done = next(c for c in replies.seen if final(c.text))
            latencies.append((done.at - queued) * 1000)

    started = time.monotonic()
    await asyncio.gather(*(one_chat(chat_base + i) for i in range(chats)))
    return LoadFigures(chats * questions, time.monotonic() - started, latencies, first_tokens)


class _Replies:
    """The messages and edits the bot sent to one chat since call number `start`, read
    incrementally: the harness shares the bots' CPU, so it must not rescan every call
    each time any chat gets one."""

    def __init__(self, telegram: FakeTelegramServer, chat_id: int, *, start: int) -> None:
        self._telegram, self._chat_id, self._next = telegram, chat_id, start
        self.seen: list[RecordedCall] = []

    def read(self, final: Callable[[str], bool]) -> bool:
        """Take in the calls answered since the last read; True once a final reply is in."""
        calls = self._telegram.calls
        while self._next < len(calls):
            call = calls[self._next]
            reply = call.method.lower() in _REPLY_METHODS
            if reply and call.status == 0:
                break  # still being answered: read it next time
            self._next += 1  # (a long poll still waiting is no reply: passed over)
            if reply and call.ok and call.chat_id == self._chat_id:
                self.seen.append(call)
        return any(final(c.text) for c in self.seen)
