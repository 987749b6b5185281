"""/usage: a user's own token usage, today and over the last week, and the budget left."""

from __future__ import annotations

from datetime import UTC, datetime

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import BotCommand, Message
from aiogram.utils.i18n import gettext as _

from bot.operations.ops import Ops
from reasoning_core import N_

USAGE_COMMAND = BotCommand(command="usage", description=N_("Your token usage and daily budget"))
DAYS = 7


async def usage_handler(message: Message, ops: Ops) -> None:
    if message.from_user is None:
        return
    days = await ops.usage.recent(message.from_user.id, days=DAYS)
    now = datetime.now(UTC).date()
    today = next((d.tokens for d in days if d.day == now), 0)
    lines = [_("🪙 <b>Your token usage</b> (UTC days)")]
    if not days:
        lines.append(_("No tokens used in the last 7 days."))
    day_line = _(
        "• {day}: {tokens:,} tokens ({prompt:,} prompt + {completion:,} completion, "
        "{calls} LLM calls)"
    )
    lines += [
        day_line.format(
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
        left = max(budget - today, 0)
        lines.append(
            _("Daily budget: {budget:,} tokens; {left:,} left today.").format(
                budget=budget, left=left
            )
        )
    else:
        lines.append(_("There is no daily token budget."))
    await message.answer("\n".join(lines))


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(usage_handler, Command("usage"))
    return router
