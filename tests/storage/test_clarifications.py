"""PgClarificationStore against a real PostgreSQL (migration 002)."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from reasoning_core.errors import NotFoundError
from reasoning_core.models import ClarifyingQuestion, StrategyDecision
from reasoning_core.ports import (
    CLARIFICATION_ID_PATTERN,
    PendingClarification,
    new_clarification_id,
)
from storage.clarifications import PgClarificationStore
from storage.users import PgUserStore

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
CHAT, USER = -1001, 7


def _decision(*questions: ClarifyingQuestion) -> StrategyDecision:
    return StrategyDecision(
        strategy="clarify",
        confidence=0.55,
        reason="the cell is not named",
        uncertainty_reason="which cell?",
        restated_goal="find why traffic dropped",
        language="ru",
        questions=list(questions),
        source="llm",
    )


Q1 = ClarifyingQuestion(text="Какая сота?", options=["12345", "12346", "все «соты»"])
Q2 = ClarifyingQuestion(text="Since when?", options=["Monday", "last week"])
Q3 = ClarifyingQuestion(text="Which metric?", options=[])


def _pending(
    *, chat_id: int = CHAT, user_id: int = USER, ttl: timedelta = timedelta(hours=24)
) -> PendingClarification:
    return PendingClarification(
        chat_id=chat_id,
        user_id=user_id,
        question="почему упал трафик?",
        decision=_decision(Q1, Q2),
        questions=[Q1, Q2],
        created_at=NOW,
        expires_at=NOW + ttl,
    )


@pytest.fixture
async def store(pool: asyncpg.Pool[Any]) -> PgClarificationStore:
    users = PgUserStore(pool)
    await users.touch(USER)
    await users.touch(8)
    return PgClarificationStore(pool)


def test_ids_are_short_url_safe_and_distinct() -> None:
    ids = {new_clarification_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(re.fullmatch(CLARIFICATION_ID_PATTERN, i) for i in ids)
    assert all(len(f"clar:{i}:3:1".encode()) <= 64 for i in ids)


async def test_save_then_active_and_get_round_trip(store: PgClarificationStore) -> None:
    pending = _pending()
    await store.save(pending)
    active = await store.active(CHAT, USER, now=NOW)
    assert active == pending
    assert active is not None
    assert active.decision == _decision(Q1, Q2)
    assert active.questions[0].options == ["12345", "12346", "все «соты»"]
    assert active.next_question == Q1
    assert await store.get(pending.id) == pending
    assert await store.get("unknown-id") is None
    assert await store.active(CHAT, 8, now=NOW) is None
    assert await store.active(CHAT + 1, USER, now=NOW) is None


async def test_answers_are_appended_in_order(store: PgClarificationStore) -> None:
    pending = _pending()
    await store.save(pending)
    after_one = await store.add_answer(pending.id, "12345", now=NOW)
    assert after_one.answers == ["12345"]
    assert after_one.next_question == Q2
    after_two = await store.add_answer(pending.id, "с понедельника", now=NOW)
    assert after_two.answers == ["12345", "с понедельника"]
    assert after_two.next_question is None
    assert await store.active(CHAT, USER, now=NOW) == after_two


async def test_concurrent_answers_are_not_lost(store: PgClarificationStore) -> None:
    pending = _pending()
    await store.save(pending)
    await asyncio.gather(*(store.add_answer(pending.id, f"a{i}", now=NOW) for i in range(8)))
    stored = await store.get(pending.id)
    assert stored is not None
    assert sorted(stored.answers) == sorted(f"a{i}" for i in range(8))


async def test_next_round_appends_questions_and_keeps_answers(
    store: PgClarificationStore,
) -> None:
    pending = _pending()
    await store.save(pending)
    await store.add_answer(pending.id, "12345", now=NOW)
    await store.add_answer(pending.id, "Monday", now=NOW)
    later = NOW + timedelta(hours=30)
    second = await store.next_round(
        pending.id, decision=_decision(Q3), questions=[Q3], expires_at=later, now=NOW
    )
    assert second.round == 2
    assert second.decision == _decision(Q3)
    assert second.questions == [Q1, Q2, Q3]
    assert second.answers == ["12345", "Monday"]
    assert second.next_question == Q3
    assert second.expires_at == later
    assert await store.active(CHAT, USER, now=NOW + timedelta(hours=25)) == second


async def test_close_makes_it_inactive_but_still_readable(store: PgClarificationStore) -> None:
    pending = _pending()
    await store.save(pending)
    await store.close(pending.id)
    await store.close(pending.id)  # idempotent
    assert await store.active(CHAT, USER, now=NOW) is None
    closed = await store.get(pending.id)
    assert closed is not None
    assert closed.status == "answered"
    assert closed.closed_at is not None
    assert not closed.is_open(NOW)
    with pytest.raises(NotFoundError):
        await store.add_answer(pending.id, "too late", now=NOW)
    with pytest.raises(NotFoundError):
        await store.next_round(pending.id, decision=_decision(Q3), questions=[Q3], now=NOW)
    with pytest.raises(NotFoundError):
        await store.close("unknown-id")


async def test_cancel_closes_the_active_one(store: PgClarificationStore) -> None:
    assert await store.cancel(CHAT, USER, now=NOW) is False
    pending = _pending()
    await store.save(pending)
    assert await store.cancel(CHAT, 8, now=NOW) is False  # another user's: untouched
    assert await store.cancel(CHAT, USER, now=NOW) is True
    assert await store.active(CHAT, USER, now=NOW) is None
    cancelled = await store.get(pending.id)
    assert cancelled is not None
    assert cancelled.status == "cancelled"
    assert await store.cancel(CHAT, USER, now=NOW) is False


async def test_newest_wins(store: PgClarificationStore) -> None:
    older, newer = _pending(), _pending()
    other_user = _pending(user_id=8)
    await store.save(older)
    await store.save(other_user)
    await store.save(newer)
    assert await store.active(CHAT, USER, now=NOW) == newer
    assert await store.active(CHAT, 8, now=NOW) == other_user  # unaffected
    superseded = await store.get(older.id)
    assert superseded is not None
    assert superseded.status == "superseded"
    assert not superseded.is_open(NOW)
    with pytest.raises(NotFoundError):
        await store.add_answer(older.id, "late answer to the old one", now=NOW)


async def test_racing_saves_leave_exactly_one_active(
    store: PgClarificationStore, pool: asyncpg.Pool[Any]
) -> None:
    racers = [_pending() for _ in range(20)]
    await asyncio.gather(*(store.save(p) for p in racers))
    active = await store.active(CHAT, USER, now=NOW)
    assert active is not None
    assert active.id in {p.id for p in racers}
    statuses = await pool.fetch("SELECT status FROM clarifications WHERE user_id = $1", USER)
    assert sorted(r["status"] for r in statuses) == ["active"] + ["superseded"] * 19


async def test_expired_is_not_active(store: PgClarificationStore) -> None:
    pending = _pending(ttl=timedelta(hours=1))
    await store.save(pending)
    assert await store.active(CHAT, USER, now=NOW + timedelta(minutes=59)) is not None
    expired_at = NOW + timedelta(hours=1)
    assert await store.active(CHAT, USER, now=expired_at) is None
    assert not pending.is_open(expired_at)
    with pytest.raises(NotFoundError):
        await store.add_answer(pending.id, "late", now=expired_at)
    # /cancel after expiry: nothing was pending any more.
    assert await store.cancel(CHAT, USER, now=expired_at) is False


async def test_default_clock_is_the_applications(store: PgClarificationStore) -> None:
    now = datetime.now(UTC)
    live = PendingClarification(
        chat_id=CHAT,
        user_id=USER,
        question="why is it slow?",
        decision=_decision(Q3),
        questions=[Q3],
        expires_at=now + timedelta(minutes=5),
    )
    await store.save(live)
    assert await store.active(CHAT, USER) == live
    assert live.is_open()
    dead = live.model_copy(update={"id": new_clarification_id(), "expires_at": now})
    await store.save(dead)
    assert await store.active(CHAT, USER) is None


async def test_clarification_for_unknown_user_is_not_found(store: PgClarificationStore) -> None:
    with pytest.raises(NotFoundError):
        await store.save(_pending(user_id=404))
