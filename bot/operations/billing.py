"""Who pays for a model call, and when the bill is written.

- The *usage owner* is a context variable set per Telegram update (the access
  middleware, bot/telegram/middlewares/access.py), per API call, or with
  `usage_owner(user_id)`. Tasks started from a handler inherit it, so a deep
  analysis running in the background still bills its user.
- `charge` adds one call's usage to the owner's day (`UsageStore`); the
  instrumented model (bot/wiring/instrumented.py) calls it after every call.
- `deferred_billing`: inside it (an update being answered) the first
  `DEFERRED_CALLS` calls are not billed one by one: `BilledTurnWriter` writes
  their usage with the exchange and the memory entry, in the same statement (one
  transaction after the model call). What is not written that way (no exchange, a
  failed write) is billed when the block ends; calls past `DEFERRED_CALLS` (a deep
  analysis) are billed as they come.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from reasoning_core import Exchange, MemoryEntry, StoreError, Usage, UsageStore

log = logging.getLogger(__name__)

_usage_owner: ContextVar[int | None] = ContextVar("whytree_usage_owner", default=None)


def current_usage_owner() -> int | None:
    """The user whose budget LLM calls made now are charged to, if any."""
    return _usage_owner.get()


@contextmanager
def usage_owner(user_id: int | None) -> Iterator[None]:
    """Charge LLM calls made inside the block (and tasks started in it) to `user_id`."""
    token = _usage_owner.set(user_id)
    try:
        yield
    finally:
        _usage_owner.reset(token)


#: Calls whose usage waits for the turn's write: a quick answer's strategy and answer.
DEFERRED_CALLS = 2


@dataclass
class _Bill:
    """Usage of `owner`'s calls not written yet; closed: calls are billed as they come."""

    owner: int
    usage: Usage = field(default_factory=Usage)
    open: bool = True


_bill: ContextVar[_Bill | None] = ContextVar("whytree_bill", default=None)


@asynccontextmanager
async def deferred_billing(usage: UsageStore, user_id: int) -> AsyncIterator[None]:
    """Hold back the billing of `user_id`'s first calls for the turn's write; what is
    still held at the end is billed then."""
    bill = _Bill(owner=user_id)
    token = _bill.set(bill)
    try:
        yield
    finally:
        _bill.reset(token)
        bill.open = False
        held, bill.usage = bill.usage, Usage()
        if held.llm_calls:
            try:
                await usage.add(user_id, held)
            except StoreError as e:
                log.error("could not record token usage of user %s: %s", user_id, e)


class UsageTurnWriter(Protocol):
    """A `TurnWriter` that can add token usage in the same write (storage/turns.py)."""

    async def write(
        self,
        exchange: Exchange | None,
        memory: MemoryEntry | None,
        *,
        usage: tuple[int, Usage] | None = None,
    ) -> None: ...


class BilledTurnWriter:
    """`TurnWriter` that writes the held-back usage (`deferred_billing`) with the turn."""

    def __init__(self, inner: UsageTurnWriter) -> None:
        self._inner = inner

    async def write(self, exchange: Exchange | None, memory: MemoryEntry | None) -> None:
        bill = _bill.get()
        if bill is None or not bill.open or not bill.usage.llm_calls:
            await self._inner.write(exchange, memory)
            return
        held, bill.usage = bill.usage, Usage()
        try:
            await self._inner.write(exchange, memory, usage=(bill.owner, held))
        except BaseException:
            bill.usage = bill.usage + held  # billed at the end of the block instead
            raise


async def charge(store: UsageStore, usage: Usage) -> None:
    """Charge one call's `usage` to the current owner (nothing without one): held for the
    turn's write inside `deferred_billing`, else added to the owner's day now."""
    owner = current_usage_owner()
    if owner is None:
        return
    call = Usage(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        llm_calls=1,
    )
    bill = _bill.get()
    if bill is not None and bill.open and bill.owner == owner:
        if bill.usage.llm_calls < DEFERRED_CALLS:
            bill.usage = bill.usage + call  # written with the turn
            return
        bill.open = False  # a long run (deep): bill what was held and go on as we come
        call, bill.usage = bill.usage + call, Usage()
    try:
        await store.add(owner, call)
    except StoreError as e:  # the answer matters more than the bookkeeping
        log.error("could not record token usage of user %s: %s", owner, e)
