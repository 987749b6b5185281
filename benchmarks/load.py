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

from tests.fakes.telegram_server import FakeTelegramServer, RecordedCall

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
            start = len(telegram.calls)
            queued = time.monotonic()
            telegram.push_message(chat_id, question(chat_id, number))
            await telegram.wait_for(_answered(telegram, chat_id, start, final), reply_timeout)
            replies = _replies(telegram, chat_id, start)
            first_tokens.append((replies[0].at - queued) * 1000)
            done = next(c for c in replies if final(c.text))
            latencies.append((done.at - queued) * 1000)

    started = time.monotonic()
    await asyncio.gather(*(one_chat(chat_base + i) for i in range(chats)))
    return LoadFigures(chats * questions, time.monotonic() - started, latencies, first_tokens)


def _replies(telegram: FakeTelegramServer, chat_id: int, start: int) -> list[RecordedCall]:
    """The messages and edits the bot sent to `chat_id` since call number `start`."""
    return [
        c
        for c in telegram.calls[start:]
        if c.ok and c.chat_id == chat_id and c.method.lower() in _REPLY_METHODS
    ]


def _answered(
    telegram: FakeTelegramServer, chat_id: int, start: int, final: Callable[[str], bool]
) -> Callable[[], bool]:
    return lambda: any(final(c.text) for c in _replies(telegram, chat_id, start))
