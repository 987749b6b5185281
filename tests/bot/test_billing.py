"""Token usage held back for the turn's write (bot/operations/billing.py `deferred_billing`),
on the real database: never lost, never counted twice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg

from bot.operations.billing import DEFERRED_CALLS, BilledTurnWriter, deferred_billing, usage_owner
from bot.operations.metrics import Metrics
from bot.wiring.instrumented import InstrumentedChatModel
from reasoning_core.models import Usage
from reasoning_core.ports import ChatMessage, Completion, ToolSpec
from storage.turns import PgTurnWriter
from storage.usage import PgUsageStore, utc_today
from storage.users import PgUserStore

USER = 31
PROMPT = [ChatMessage(role="user", content="hi")]


class _Model:
    """The model edge: every call costs 7 + 3 tokens."""

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> Completion:
        return Completion(text="ok", usage=Usage(prompt_tokens=7, completion_tokens=3))


async def _billed(usage: PgUsageStore) -> int:
    return (await usage.on(USER, utc_today())).llm_calls


async def test_held_usage_goes_with_the_turn_or_at_the_end(pool: asyncpg.Pool[Any]) -> None:
    await PgUserStore(pool).touch(USER)
    usage = PgUsageStore(pool)
    model = InstrumentedChatModel(_Model(), metrics=Metrics(), usage=usage)
    writer = BilledTurnWriter(PgTurnWriter(pool))
    with usage_owner(USER):
        async with deferred_billing(usage, USER):
            await model.complete(PROMPT)
            assert await _billed(usage) == 0  # held for the turn's write
            await writer.write(None, None)
            assert await _billed(usage) == 1  # written with the turn
        assert await _billed(usage) == 1  # nothing held twice
        async with deferred_billing(usage, USER):
            await model.complete(PROMPT)  # no turn is written (a refusal, a command)
        assert await _billed(usage) == 2  # billed when the update is done
        async with deferred_billing(usage, USER):
            for _ in range(DEFERRED_CALLS + 1):  # a long run: billed as it goes
                await model.complete(PROMPT)
            assert await _billed(usage) == 2 + DEFERRED_CALLS + 1
            await writer.write(None, None)
        day = await usage.on(USER, utc_today())
    assert day.llm_calls == 2 + DEFERRED_CALLS + 1
    assert (day.prompt_tokens, day.completion_tokens) == (7 * day.llm_calls, 3 * day.llm_calls)
