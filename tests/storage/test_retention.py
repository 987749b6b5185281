"""Updates kept per bot, and retention: the inbox, the outbox and the janitor's deletes on
the real test database."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from bot.delivery.janitor import Janitor, RetentionPolicy
from storage.inbox import PgInbox
from storage.leases import PgLeases, PgRateHits
from storage.outbox import PgOutbox
from storage.retention import PgRetention

A, B = 111, 222


def _update(update_id: int, text: str) -> dict[str, Any]:
    return {"update_id": update_id, "message": {"text": text, "chat": {"id": 5}}}


async def test_two_bots_keep_their_own_updates_under_one_id(pool: asyncpg.Pool[Any]) -> None:
    a, b = PgInbox(pool, bot_id=A), PgInbox(pool, bot_id=B)
    assert await a.add(5, _update(5, "why?"), chat_id=5) == "new"
    assert await b.add(5, _update(5, "why?"), chat_id=5) == "new"  # not bot A's copy
    claimed_b = await b.claim("w", lease_sec=5)
    assert claimed_b is not None and claimed_b.bot_id == B
    assert await b.claim("w", lease_sec=5) is None  # bot A's update is not B's to answer
    claimed_a = await a.claim("w", lease_sec=5)
    assert claimed_a is not None and claimed_a.bot_id == A and claimed_a.id != claimed_b.id


async def test_a_copy_is_a_redelivery_and_another_body_a_new_update(
    pool: asyncpg.Pool[Any],
) -> None:
    inbox = PgInbox(pool, bot_id=A)
    assert await inbox.add(7, _update(7, "first"), chat_id=5) == "new"
    # The same body, keys in another order (as the webhook's JSON may have them).
    copy = {"message": {"chat": {"id": 5}, "text": "first"}, "update_id": 7}
    assert await inbox.add(7, copy, chat_id=5) == "redelivery"
    assert await inbox.add_claimed(7, copy, chat_id=5, owner="w", lease_sec=5) == (
        "redelivery",
        None,
    )
    assert await inbox.add(7, _update(7, "a week later"), chat_id=5) == "reused"
    assert await inbox.add(7, _update(7, "a week later"), chat_id=5) == "redelivery"
    assert await inbox.counts() == {"pending": 2}


async def test_updates_stored_before_they_were_kept_per_bot_are_adopted_once(
    pool: asyncpg.Pool[Any],
) -> None:
    await pool.execute(
        "INSERT INTO inbox_updates (bot_id, update_id, payload) VALUES (0, 1, $1), (0, 2, $2)",
        _update(1, "old"),
        _update(2, "old"),
    )
    inbox = PgInbox(pool, bot_id=A)
    assert await inbox.adopt_legacy() == 2
    assert await inbox.adopt_legacy() == 0  # idempotent
    assert await PgInbox(pool, bot_id=B).adopt_legacy() == 0  # the first bot took them
    assert await inbox.counts() == {"pending": 2}


async def _aged(pool: asyncpg.Pool[Any], hours: int) -> None:
    """Everything delivery wrote so far happened `hours` ago."""
    ago = f"now() - interval '{hours} hours'"
    await pool.execute(
        f"""UPDATE inbox_updates SET received_at = {ago},
                   finished_at = CASE WHEN finished_at IS NOT NULL THEN {ago} END;
            UPDATE outbox_messages SET created_at = {ago}, sent_at = {ago};
            UPDATE leases SET lease_until = {ago};
            UPDATE rate_hits SET at = {ago};"""
    )


async def test_retention_deletes_what_is_finished_and_old_in_batches(
    pool: asyncpg.Pool[Any],
) -> None:
    inbox, outbox = PgInbox(pool, bot_id=A), PgOutbox(pool)
    for update_id in range(1, 8):
        await inbox.add(update_id, _update(update_id, "q"), chat_id=5)
    for _ in range(5):  # five answered, two still waiting
        item = await inbox.claim("w", lease_sec=5)
        assert item is not None
        await inbox.finish(item.id, "w")
        await outbox.begin(f"i{item.id}:0", chat_id=5, method="sendMessage", request={})
        await outbox.sent(f"i{item.id}:0", {"message_id": 1})
    await outbox.begin("i999:0", chat_id=5, method="sendMessage", request={})  # never confirmed
    await PgLeases(pool).acquire("chat", "5", "i1", limit=1, ttl_sec=5)
    await PgRateHits(pool).hit(5, "i1", limit=10, window_sec=60)
    await _aged(pool, hours=80)
    await inbox.add(8, _update(8, "q"), chat_id=5)  # a new one: not old
    retention = PgRetention(pool)
    assert await retention.purge("updates", horizon_sec=72 * 3600, limit=3) == 3
    assert await retention.purge("updates", horizon_sec=72 * 3600, limit=3) == 2
    assert await retention.purge("updates", horizon_sec=72 * 3600, limit=3) == 0
    assert await retention.purge("replies", horizon_sec=72 * 3600, limit=100) == 5
    assert await retention.purge("leases", horizon_sec=72 * 3600, limit=100) == 1
    assert await retention.purge("rate hits", horizon_sec=72 * 3600, limit=100) == 1
    assert await inbox.counts() == {"pending": 3}  # waiting updates are kept, however old
    assert await outbox.counts() == {"pending": 1}  # an unconfirmed reply is kept
    assert await retention.purge("updates", horizon_sec=90 * 3600, limit=100) == 0


async def test_only_the_janitor_holding_the_lease_deletes(pool: asyncpg.Pool[Any]) -> None:
    inbox = PgInbox(pool, bot_id=A)
    for update_id in range(1, 6):
        await inbox.add(update_id, _update(update_id, "q"), chat_id=5)
        item = await inbox.claim("w", lease_sec=5)
        assert item is not None
        await inbox.finish(item.id, "w")
    await _aged(pool, hours=80)
    # every_sec 1: the janitor lease (3 s) outlives a run on a busy machine.
    policy = RetentionPolicy(horizon_sec=72 * 3600, every_sec=1.0, batch=2, max_batches=10)
    janitors = [
        Janitor(retention=PgRetention(pool), leases=PgLeases(pool), policy=policy, owner="p")
        for _ in range(2)
    ]
    first, second = await asyncio.gather(*(j.run_once() for j in janitors))
    runs = [r for r in (first, second) if r is not None]
    assert len(runs) == 1 and runs[0]["updates"] == 5  # in batches of 2: 2, 2, 1
    holder = janitors[0] if first is not None else janitors[1]
    other = janitors[1] if holder is janitors[0] else janitors[0]
    assert await other.run_once() is None  # the lease is still held
    held = holder.runs
    running = asyncio.create_task(holder.run())
    for _ in range(6000):  # until it has run once more under the lease (60 s at most)
        if holder.runs > held:
            break
        await asyncio.sleep(0.01)
    assert holder.runs > held
    running.cancel()  # the holder stops: it gives up the lease on the way out
    await asyncio.gather(running, return_exceptions=True)
    assert await other.run_once() == {"updates": 0, "replies": 0, "leases": 0, "rate hits": 0}
    assert await inbox.counts() == {}
