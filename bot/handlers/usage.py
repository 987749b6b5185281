"""/usage: a user's own token usage, today and over the last week, and the budget left."""

from __future__ import annotations

from datetime import UTC, datetime

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import BotCommand, Message

from bot.ops import Ops

USAGE_COMMAND = BotCommand(command="usage", description="Your token usage and daily budget")
DAYS = 7


async def usage_handler(message: Message, ops: Ops) -> None:
    if message.from_user is None:
        return
    days = await ops.usage.recent(message.from_user.id, days=DAYS)
    now = datetime.now(UTC).date()
    today = next((d.tokens for d in days if d.day == now), 0)
    lines = ["🪙 <b>Your token usage</b> (UTC days)"]
    if not days:
        lines.append("No tokens used in the last 7 days.")
    for d in days:
        lines.append(
            f"• {d.day.isoformat()}: {d.tokens:,} tokens "
            f"({d.usage.prompt_tokens:,} prompt + {d.usage.completion_tokens:,} completion, "
            f"{d.usage.llm_calls} LLM calls)"
        )
    budget = ops.daily_token_budget
    if budget > 0:
        left = max(budget - today, 0)
        lines.append(f"Daily budget: {budget:,} tokens; {left:,} left today.")
    else:
        lines.append("There is no daily token budget.")
    await message.answer("\n".join(lines))


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(usage_handler, Command("usage"))
    return router
