"""Pending clarifications in PostgreSQL (``clarifications``, migration 002).

At most one active row per chat and user, enforced by a partial unique index:
`save` supersedes the older row and inserts the new one in one transaction, and
retries when a concurrent `save` won the race, so the newest always wins.

Clock: expiry compares ``expires_at`` with the *application's* clock (``now``
arguments default to ``datetime.now(UTC)``), the same clock that set expires_at;
the database clock is not used for expiry. closed_at uses the same clock.
JSONB values are written as JSON text cast to jsonb and read back whether or not
the pool has a jsonb codec.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import asyncpg
from pydantic import ValidationError

from reasoning_core import (
    ClarifyingQuestion,
    NotFoundError,
    PendingClarification,
    StoreError,
    StrategyDecision,
)
from storage.errors import translated

COLUMNS = """id, chat_id, user_id, question, decision, questions, answers, round,
              status, created_at, expires_at, closed_at"""
#: "Open" = active and not expired; in queries by id, $1 is the id and $2 is `now`.
_OPEN = "status = 'active' AND expires_at > $2"


def _now(now: datetime | None) -> datetime:
    return now or datetime.now(UTC)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _load(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def pending_clarification(row: asyncpg.Record | dict[str, Any]) -> PendingClarification:
    """A stored row (or its jsonb) as a `PendingClarification`; StoreError when unreadable."""
    data = dict(row)
    for key in ("decision", "questions", "answers"):
        data[key] = _load(data[key])
    try:
        return PendingClarification.model_validate(data)
    except ValidationError as e:
        raise StoreError(f"stored clarification {data['id']!r} is unreadable: {e}") from e


def _questions_json(questions: Sequence[ClarifyingQuestion]) -> str:
    return _json([q.model_dump(mode="json") for q in questions])


class PgClarificationStore:
    """`ClarificationStore` on the ``clarifications`` table."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("saving a clarification")
    async def save(self, pending: PendingClarification) -> None:
        """Store `pending` as the active one for its chat and user; older ones are superseded.

        The user must exist (`NotFoundError` otherwise); the stored status is always
        ``active`` whatever `pending.status` says.
        """
        async with self._pool.acquire() as conn, conn.transaction():
            # Saves for one chat and user take turns (until this transaction ends), so
            # the one that supersedes the active clarification always inserts the next;
            # racing optimistically, six at once could supersede each other for ever.
            await conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 17))",
                f"clarification:{pending.chat_id}:{pending.user_id}",
            )
            await conn.execute(
                """UPDATE clarifications SET status = 'superseded', closed_at = $3
                   WHERE chat_id = $1 AND user_id = $2 AND status = 'active'""",
                pending.chat_id,
                pending.user_id,
                _now(None),
            )
            inserted = await conn.fetchval(
                """INSERT INTO clarifications (id, chat_id, user_id, question, decision,
                       questions, answers, round, created_at, expires_at)
                   VALUES ($1, $2, $3, $4, $5::text::jsonb, $6::text::jsonb,
                       $7::text::jsonb, $8, $9, $10)
                   ON CONFLICT (chat_id, user_id) WHERE status = 'active' DO NOTHING
                   RETURNING id""",
                pending.id,
                pending.chat_id,
                pending.user_id,
                pending.question,
                _json(pending.decision.model_dump(mode="json")),
                _questions_json(pending.questions),
                _json(pending.answers),
                pending.round,
                pending.created_at,
                pending.expires_at,
            )
        if inserted is None:  # only a writer that skips the lock could get here
            raise StoreError(f"could not save clarification {pending.id!r}: another is active")

    @translated("reading the active clarification")
    async def active(
        self, chat_id: int, user_id: int, *, now: datetime | None = None
    ) -> PendingClarification | None:
        """The open (active, not expired) clarification of this user in this chat."""
        row = await self._pool.fetchrow(
            f"""SELECT {COLUMNS} FROM clarifications
                WHERE chat_id = $1 AND user_id = $2 AND status = 'active' AND expires_at > $3""",
            chat_id,
            user_id,
            _now(now),
        )
        return None if row is None else pending_clarification(row)

    @translated("reading a clarification")
    async def get(self, clarification_id: str) -> PendingClarification | None:
        """Any stored clarification by id, whatever its status (check `is_open`)."""
        row = await self._pool.fetchrow(
            f"SELECT {COLUMNS} FROM clarifications WHERE id = $1", clarification_id
        )
        return None if row is None else pending_clarification(row)

    @translated("answering a clarification")
    async def add_answer(
        self, clarification_id: str, answer: str, *, now: datetime | None = None
    ) -> PendingClarification:
        """Append an answer atomically; `NotFoundError` if unknown, closed or expired."""
        row = await self._pool.fetchrow(
            f"""UPDATE clarifications SET answers = answers || jsonb_build_array($3::text)
                WHERE id = $1 AND {_OPEN} RETURNING {COLUMNS}""",
            clarification_id,
            _now(now),
            answer,
        )
        if row is None:
            raise NotFoundError(f"no open clarification {clarification_id!r}")
        return pending_clarification(row)

    @translated("starting a clarification round")
    async def next_round(
        self,
        clarification_id: str,
        *,
        decision: StrategyDecision,
        questions: Sequence[ClarifyingQuestion],
        expires_at: datetime | None = None,
        now: datetime | None = None,
    ) -> PendingClarification:
        """round + 1, the new decision, its questions appended, answers kept."""
        row = await self._pool.fetchrow(
            f"""UPDATE clarifications SET round = round + 1, decision = $3::text::jsonb,
                    questions = questions || $4::text::jsonb,
                    expires_at = COALESCE($5, expires_at)
                WHERE id = $1 AND {_OPEN} RETURNING {COLUMNS}""",
            clarification_id,
            _now(now),
            _json(decision.model_dump(mode="json")),
            _questions_json(questions),
            expires_at,
        )
        if row is None:
            raise NotFoundError(f"no open clarification {clarification_id!r}")
        return pending_clarification(row)

    @translated("closing a clarification")
    async def close(self, clarification_id: str) -> None:
        """Mark it answered (idempotent); `NotFoundError` if the id is unknown."""
        exists = await self._pool.fetchval(
            """WITH closed AS (
                   UPDATE clarifications SET status = 'answered', closed_at = $2
                   WHERE id = $1 AND status = 'active')
               SELECT EXISTS (SELECT 1 FROM clarifications WHERE id = $1)""",
            clarification_id,
            _now(None),
        )
        if not exists:
            raise NotFoundError(f"unknown clarification {clarification_id!r}")

    @translated("cancelling a clarification")
    async def cancel(self, chat_id: int, user_id: int, *, now: datetime | None = None) -> bool:
        """Cancel the open clarification here (/cancel); True if one was open.

        Active rows that have already expired are cancelled too, but do not count.
        """
        moment = _now(now)
        rows = await self._pool.fetch(
            """UPDATE clarifications SET status = 'cancelled', closed_at = $3
               WHERE chat_id = $1 AND user_id = $2 AND status = 'active'
               RETURNING expires_at""",
            chat_id,
            user_id,
            moment,
        )
        return any(r["expires_at"] > moment for r in rows)
