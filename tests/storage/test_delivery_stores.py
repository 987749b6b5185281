"""The inbox, outbox, leases and rate hits on the real test database."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg

from storage.inbox import PgInbox
from storage.leases import PgLeases, PgRateHits
from storage.outbox import PgOutbox

BOT = 123456
#: A lease that runs out within the test: long enough for the statements that must see it
#: held on a busy machine; what runs after it is polled for, not slept for.
SHORT = 1.0

T = TypeVar("T")


async def _until(attempt: Callable[[], Awaitable[T]]) -> T:
    """`attempt()` again every 50 ms until it gives something truthy (30 s at most)."""
    for _ in range(600):
        if got := await attempt():
            return got
        await asyncio.sleep(0.05)
    raise AssertionError("the lease never ran out")


async def test_inbox_claims_once_and_takes_over_an_expired_lease(
    pool: asyncpg.Pool[Any],
) -> None:
    inbox = PgInbox(pool, bot_id=BOT)
    assert await inbox.add(1, {"update_id": 1}, chat_id=5) == "new"
    assert await inbox.add(1, {"update_id": 1}, chat_id=5) == "redelivery"
    first, second = await asyncio.gather(
        inbox.claim("a", lease_sec=SHORT), inbox.claim("b", lease_sec=SHORT)
    )
    claimed = [c for c in (first, second) if c is not None]
    assert len(claimed) == 1 and claimed[0].attempts == 1  # SKIP LOCKED: one winner
    assert await inbox.claim("c", lease_sec=5) is None  # held
    # The holder died: once its lease runs out, the update is claimed again.
    again = await _until(lambda: inbox.claim("c", lease_sec=5))
    assert again is not None and again.update_id == 1 and again.attempts == 2
    owner = "a" if first is not None else "b"
    assert await inbox.renew(again.id, owner, lease_sec=5) is False  # no longer its update
    await inbox.finish(again.id, "c")
    assert await inbox.claim("d", lease_sec=5) is None
    assert await inbox.counts() == {"done": 1}


async def test_outbox_keeps_the_first_write_and_its_sent_answer(pool: asyncpg.Pool[Any]) -> None:
    outbox = PgOutbox(pool)
    entry = await outbox.begin("u1:0", chat_id=5, method="sendMessage", request={"text": "a"})
    assert entry.status == "pending" and entry.result is None
    await outbox.sent("u1:0", {"message_id": 9})
    again = await outbox.begin("u1:0", chat_id=5, method="sendMessage", request={"text": "b"})
    assert again.status == "sent" and again.result == {"message_id": 9}
    await outbox.begin("u1:1", chat_id=5, method="sendMessage", request={"text": "c"})
    await outbox.attempt_failed("u1:1", "TelegramBadRequest: chat not found", final=True)
    assert await outbox.counts() == {"sent": 1, "failed": 1}


async def test_leases_hold_a_limit_across_holders_and_run_out(pool: asyncpg.Pool[Any]) -> None:
    leases = PgLeases(pool)
    assert await leases.acquire("chat", "5", "u1", limit=1, ttl_sec=SHORT)
    assert not await leases.acquire("chat", "5", "u2", limit=1, ttl_sec=SHORT)  # busy
    assert await leases.acquire("chat", "5", "u1", limit=1, ttl_sec=SHORT)  # its own, again
    assert await leases.acquire("deep", "7", "u1", limit=2, ttl_sec=5)
    assert await leases.acquire("deep", "7", "u2", limit=2, ttl_sec=5)
    assert not await leases.acquire("deep", "7", "u3", limit=2, ttl_sec=5)
    # u1's chat lease was not renewed: it runs out, and u2 gets the chat.
    assert await _until(lambda: leases.acquire("chat", "5", "u2", limit=1, ttl_sec=5))
    await leases.renew_all("u2", ttl_sec=60)
    await leases.release("deep", "7", "u1")
    assert await leases.held("deep", "7") == 1


async def test_rate_hits_count_each_key_once_across_callers(pool: asyncpg.Pool[Any]) -> None:
    hits = PgRateHits(pool)
    assert await hits.hit(5, "u1", limit=2, window_sec=60) == 0
    assert await hits.hit(5, "u1", limit=2, window_sec=60) == 0  # the same update again
    assert await hits.hit(5, "u2", limit=2, window_sec=60) == 0
    wait = await hits.hit(5, "u3", limit=2, window_sec=60)
    assert 55 < wait <= 60
    assert await hits.hit(6, "u3", limit=2, window_sec=60) == 0  # another user


async def test_rate_hits_of_users_and_api_keys_are_counted_apart(pool: asyncpg.Pool[Any]) -> None:
    hits = PgRateHits(pool)
    assert await hits.hit(5, "u1", limit=1, window_sec=60) == 0
    assert await hits.hit(5, "k1", limit=1, window_sec=60, scope="api_key") == 0
    assert await hits.hit(5, "k2", limit=1, window_sec=60, scope="api_key") > 0
    assert await hits.hit(5, "u2", limit=1, window_sec=60) > 0


async def test_an_update_is_stored_and_claimed_at_once_unless_older_ones_wait(
    pool: asyncpg.Pool[Any],
) -> None:
    inbox = PgInbox(pool, bot_id=BOT)
    arrival, item = await inbox.add_claimed(1, {"update_id": 1}, chat_id=5, owner="a", lease_sec=5)
    assert arrival == "new" and item is not None and (item.update_id, item.attempts) == (1, 1)
    assert await inbox.claim("b", lease_sec=5) is None  # held by a, from its store
    again = await inbox.add_claimed(1, {"update_id": 1}, chat_id=5, owner="b", lease_sec=5)
    assert again == ("redelivery", None)
    assert await inbox.add(2, {"update_id": 2}, chat_id=5) == "new"  # waits, unclaimed
    arrival, item = await inbox.add_claimed(3, {"update_id": 3}, chat_id=6, owner="a", lease_sec=5)
    assert arrival == "new" and item is None  # update 2 is older: 3 waits its turn
    oldest = await inbox.claim("b", lease_sec=5)
    assert oldest is not None and oldest.update_id == 2
    assert await inbox.counts() == {"processing": 2, "pending": 1}


async def test_concurrent_takers_of_one_lease_get_it_once(pool: asyncpg.Pool[Any]) -> None:
    leases = PgLeases(pool)
    taken = await asyncio.gather(
        *(leases.acquire("chat", "9", f"u{i}", limit=1, ttl_sec=5) for i in range(8))
    )
    assert taken.count(True) == 1


async def test_the_outcome_of_an_update_frees_its_chat_lock(pool: asyncpg.Pool[Any]) -> None:
    inbox, leases = PgInbox(pool, bot_id=BOT), PgLeases(pool)
    await inbox.add(1, {"update_id": 1}, chat_id=5)
    item = await inbox.claim("a", lease_sec=5)
    assert item is not None
    assert await leases.acquire("chat", "5", "u1", limit=1, ttl_sec=5)
    assert await leases.acquire("deep", "7", "u1", limit=1, ttl_sec=5)
    await inbox.finish(item.id, "a", release_chat="u1")
    assert await leases.held("chat", "5") == 0
    assert await leases.held("deep", "7") == 1  # a deep slot is released by its analysis
