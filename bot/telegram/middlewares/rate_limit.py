"""Rate limits and budgets: questions per minute, concurrent deep analyses, daily tokens.

- `SlidingWindow`: at most RATE_LIMIT_PER_MIN questions per user in any 60 s.
- `DeepSlots`: at most MAX_CONCURRENT_DEEP_PER_USER deep analyses per user at once
  (the deep path takes a slot: ``async with slots.slot(user_id) as acquired``).
- `RateLimitMiddleware`: handlers flagged ``one_at_a_time`` (questions) or
  ``rate_limited`` are refused, with the time the user may ask again, when the
  user is over the per-minute limit or today's USER_DAILY_TOKEN_BUDGET.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from aiogram import BaseMiddleware
from aiogram.dispatcher.flags import get_flag
from aiogram.types import Message, TelegramObject

from bot.telegram.language import message_language
from bot.telegram.middlewares.one_question import Handler
from reasoning_core.errors import StoreError
from reasoning_core.ports import UsageStore

log = logging.getLogger(__name__)

WINDOW_SECONDS = 60.0
_SWEEP_EVERY = 1000


class SlidingWindow:
    """Per-key event counts over the last `window` seconds; `limit` 0 means unlimited."""

    def __init__(
        self,
        *,
        limit: int,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._hits: dict[int, deque[float]] = {}
        self._calls = 0

    def hit(self, key: int) -> float:
        """Record an event if allowed and return 0; else the seconds until one is allowed."""
        if self.limit <= 0:
            return 0.0
        now = self._clock()
        self._sweep(now)
        hits = self._hits.setdefault(key, deque())
        while hits and hits[0] <= now - self.window:
            hits.popleft()
        if len(hits) >= self.limit:
            return max(hits[0] + self.window - now, 0.001)
        hits.append(now)
        return 0.0

    async def check(self, key: int) -> float:
        """`hit`, as `RateLimitMiddleware` calls it (the shared window is async)."""
        return self.hit(key)

    def _sweep(self, now: float) -> None:
        # Forget users who have been quiet for a whole window, so memory stays bounded.
        self._calls += 1
        if self._calls % _SWEEP_EVERY == 0:
            quiet = [k for k, h in self._hits.items() if not h or h[-1] <= now - self.window]
            for key in quiet:
                del self._hits[key]


class QuestionWindow(Protocol):
    """Questions per user per minute: `SlidingWindow` here, or shared across replicas
    (bot/delivery/limits.py `SharedWindow`)."""

    limit: int

    async def check(self, key: int) -> float:
        """0 when allowed (and counted), else the seconds until a question is allowed."""
        ...


class DeepSlots:
    """Concurrent deep analyses per user (implements the `DeepSlotLimiter` port)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._running: dict[int, int] = {}

    def running(self, user_id: int | None = None) -> int:
        """Analyses running now: of one user, or of everyone."""
        if user_id is None:
            return sum(self._running.values())
        return self._running.get(user_id, 0)

    @asynccontextmanager
    async def slot(self, user_id: int) -> AsyncIterator[bool]:
        """Yield True with a slot held for the block, or False when the user has none free."""
        if self._running.get(user_id, 0) >= self.limit:
            yield False
            return
        self._running[user_id] = self._running.get(user_id, 0) + 1
        try:
            yield True
        finally:
            left = self._running[user_id] - 1
            if left:
                self._running[user_id] = left
            else:
                del self._running[user_id]


_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "rate": "⏳ That's more than {limit} questions a minute — please slow down. "
        "You can ask again in {seconds} s.",
        "budget": "🪙 You've used today's token budget ({used:,} of {budget:,} tokens). "
        "You can ask again after midnight UTC, in {wait}. /usage shows your usage.",
        "hours": "{hours} h {minutes} min",
        "minutes": "{minutes} min",
    },
    "ru": {
        "rate": "⏳ Больше {limit} вопросов в минуту — пожалуйста, помедленнее. "
        "Спросить снова можно через {seconds} с.",
        "budget": "🪙 Дневной бюджет токенов исчерпан ({used} из {budget}). "
        "Спросить снова можно после полуночи UTC, через {wait}. /usage покажет расход.",
        "hours": "{hours} ч {minutes} мин",
        "minutes": "{minutes} мин",
    },
}


def rate_limit_text(limit: int, retry_after: float, language: str = "en") -> str:
    seconds = max(1, math.ceil(retry_after))
    return _words(language)["rate"].format(limit=limit, seconds=seconds)


def budget_text(used: int, budget: int, now: datetime, language: str = "en") -> str:
    words = _words(language)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
    minutes = max(1, math.ceil((midnight - now).total_seconds() / 60))
    hours, minutes = divmod(minutes, 60)
    wait = (words["hours"] if hours else words["minutes"]).format(hours=hours, minutes=minutes)
    return words["budget"].format(used=used, budget=budget, wait=wait)


def _words(language: str) -> dict[str, str]:
    return _WORDS["ru" if language == "ru" else "en"]


class RateLimitMiddleware(BaseMiddleware):
    """Inner message middleware: refuse questions over the rate limit or the daily budget."""

    def __init__(
        self,
        *,
        window: QuestionWindow,
        usage: UsageStore,
        daily_token_budget: int,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._window = window
        self._usage = usage
        self._budget = daily_token_budget
        self._now = now

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        limited = get_flag(data, "one_at_a_time") or get_flag(data, "rate_limited")
        if not isinstance(event, Message) or event.from_user is None or not limited:
            return await handler(event, data)
        user_id = event.from_user.id
        language = message_language(event.text, event.from_user)
        refusal = await self._over_budget(user_id, language)
        if refusal is None:
            retry_after = await self._window.check(user_id)
            if retry_after > 0:
                refusal = rate_limit_text(self._window.limit, retry_after, language)
        if refusal is not None:
            log.info("question refused: %s", refusal, extra={"user_id": user_id})
            await event.reply(refusal)
            return None
        return await handler(event, data)

    async def _over_budget(self, user_id: int, language: str) -> str | None:
        if self._budget <= 0:
            return None
        now = self._now()
        try:
            usage = await self._usage.on(user_id, now.date())
        except StoreError as e:  # cannot check: answer rather than refuse
            log.error("could not read the token usage of user %s: %s", user_id, e)
            return None
        used = usage.prompt_tokens + usage.completion_tokens
        return budget_text(used, self._budget, now, language) if used >= self._budget else None
