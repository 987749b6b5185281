"""Rate limit and daily token budget of questions, checked before a question is handled.

`RateLimitMiddleware`: handlers flagged ``one_at_a_time`` (questions) or
``rate_limited`` are refused, with the time the user may ask again, when the user is
over the per-minute limit (RATE_LIMIT_PER_MIN, a `QuestionWindow`: bot/delivery/limits.py
`SharedWindow`, held in PostgreSQL across replicas) or today's USER_DAILY_TOKEN_BUDGET.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from aiogram import BaseMiddleware
from aiogram.dispatcher.flags import get_flag
from aiogram.types import Message, TelegramObject

from bot.delivery.ports import QuestionWindow
from bot.telegram.language import message_language
from bot.telegram.middlewares.base import Handler
from bot.wording import budget_text, rate_limit_text
from reasoning_core import StoreError, UsageStore

log = logging.getLogger(__name__)


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
