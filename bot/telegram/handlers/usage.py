"""/usage: a user's own token usage, today and over the last week, and the budget left."""

from __future__ import annotations

from datetime import UTC, datetime

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import BotCommand, Message

from bot.operations.ops import Ops
from bot.telegram.language import user_language

USAGE_COMMAND = BotCommand(command="usage", description="Your token usage and daily budget")
DAYS = 7

_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "title": "🪙 <b>Your token usage</b> (UTC days)",
        "none": "No tokens used in the last 7 days.",
        "day": "• {day}: {tokens:,} tokens ({prompt:,} prompt + {completion:,} completion, "
        "{calls} LLM calls)",
        "budget": "Daily budget: {budget:,} tokens; {left:,} left today.",
        "no_budget": "There is no daily token budget.",
    },
    "ru": {
        "title": "🪙 <b>Расход токенов</b> (дни по UTC)",
        "none": "За последние 7 дней токены не расходовались.",
        "day": "• {day}: токенов {tokens} (запрос {prompt} + ответ {completion}, "
        "вызовов модели: {calls})",
        "budget": "Дневной бюджет: {budget} токенов; на сегодня осталось {left}.",
        "no_budget": "Дневного бюджета токенов нет.",
    },
}


async def usage_handler(message: Message, ops: Ops) -> None:
    if message.from_user is None:
        return
    words = _WORDS[user_language(message.from_user)]
    days = await ops.usage.recent(message.from_user.id, days=DAYS)
    now = datetime.now(UTC).date()
    today = next((d.tokens for d in days if d.day == now), 0)
    lines = [words["title"]]
    if not days:
        lines.append(words["none"])
    lines += [
        words["day"].format(
            day=d.day.isoformat(),
            tokens=d.tokens,
            prompt=d.usage.prompt_tokens,
            completion=d.usage.completion_tokens,
            calls=d.usage.llm_calls,
        )
        for d in days
    ]
    budget = ops.daily_token_budget
    if budget > 0:
        lines.append(words["budget"].format(budget=budget, left=max(budget - today, 0)))
    else:
        lines.append(words["no_budget"])
    await message.answer("\n".join(lines))


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(usage_handler, Command("usage"))
    return router
