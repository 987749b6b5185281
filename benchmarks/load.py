"""Chat load through the fake Telegram server: N chats, M questions each, latencies recorded."""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass

from tests.fakes.telegram_server import FakeTelegramServer


@dataclass(frozen=True, slots=True)
class LoadFigures:
    messages: int
    wall_s: float
    latencies_ms: list[float]

    @property
    def msgs_per_s(self) -> float:
        return self.messages / self.wall_s if self.wall_s else 0.0

    def percentile(self, q: float) -> float:
        """The q-th percentile (0..100) of end-to-end latency, in ms."""
        ordered = sorted(self.latencies_ms)
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
    reply_timeout: float = 60.0,
    chat_base: int = 10_000,
) -> LoadFigures:
    """Each chat asks its questions one after another; chats run concurrently.

    Latency is from the update being queued to the bot's reply being recorded.
    """
    latencies: list[float] = []

    async def one_chat(chat_id: int) -> None:
        for number in range(questions):
            before = len(telegram.sent_messages(chat_id))
            queued = time.monotonic()
            telegram.push_message(chat_id, f"Question {number} from chat {chat_id}: what is DNS?")
            sent = await telegram.wait_for_messages(chat_id, before + 1, timeout=reply_timeout)
            latencies.append((sent[before].at - queued) * 1000)

    started = time.monotonic()
    await asyncio.gather(*(one_chat(chat_base + i) for i in range(chats)))
    return LoadFigures(chats * questions, time.monotonic() - started, latencies)
