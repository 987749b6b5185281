"""Silences and acknowledgements made from the chat: ``alert_actions`` (`AlertActionStore`).

A press on a silence button first claims a 'pending' row; the partial unique index
lets one press per report and chat through, so a double press creates one silence.
The row becomes 'active' with Alertmanager's id, or is deleted when Alertmanager
refused, so nothing is recorded as silenced that is not.
"""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any

import asyncpg

from reasoning_core import AlertAction, AlertAnalysis, NotFoundError
from storage.alerts import _COLUMNS as _ANALYSIS_COLUMNS
from storage.errors import translated

_COLUMNS = (
    "id, analysis_id, chat_id, kind, state, user_id, user_name, silence_id, matchers,"
    " ends_at, created_at"
)

#: Silences whose end has passed are over, whoever ends them.
_ENDED = """UPDATE alert_actions SET state = 'expired', expired_at = ends_at
            WHERE kind = 'silence' AND state = 'active' AND ends_at <= now()"""


def _action(row: asyncpg.Record) -> AlertAction:
    return AlertAction.model_validate(dict(row))


class PgAlertActionStore:
    """`AlertActionStore` on PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("reading an alert analysis")
    async def analysis(self, analysis_id: int) -> AlertAnalysis | None:
        row = await self._pool.fetchrow(
            f"SELECT {_ANALYSIS_COLUMNS} FROM alert_analyses WHERE id = $1", analysis_id
        )
        return None if row is None else AlertAnalysis.model_validate(dict(row))

    @translated("reading the firing alerts of a chat")
    async def firing_in_chat(self, chat_id: int) -> builtins.list[AlertAnalysis]:
        rows = await self._pool.fetch(
            f"""SELECT {_ANALYSIS_COLUMNS} FROM alert_analyses
                WHERE resolved_at IS NULL AND $1 = ANY (chats)
                ORDER BY created_at, id LIMIT 200""",
            chat_id,
        )
        return [AlertAnalysis.model_validate(dict(r)) for r in rows]

    @translated("recording a silence")
    async def claim_silence(
        self,
        *,
        analysis_id: int | None,
        chat_id: int,
        user_id: int,
        user_name: str,
        matchers: dict[str, str],
        ends_at: datetime,
    ) -> tuple[AlertAction, bool]:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(_ENDED)
            row = await conn.fetchrow(
                f"""INSERT INTO alert_actions (analysis_id, chat_id, kind, state, user_id,
                                               user_name, matchers, ends_at)
                    VALUES ($1, $2, 'silence', 'pending', $3, $4, $5, $6)
                    ON CONFLICT DO NOTHING RETURNING {_COLUMNS}""",
                analysis_id,
                chat_id,
                user_id,
                user_name[:200],
                matchers,
                ends_at,
            )
            if row is not None:
                return _action(row), True
            existing = await conn.fetchrow(
                f"""SELECT {_COLUMNS} FROM alert_actions
                    WHERE analysis_id = $1 AND chat_id = $2 AND kind = 'silence'
                      AND state IN ('pending', 'active')""",
                analysis_id,
                chat_id,
            )
        if existing is None:  # it ended between the two statements: try once more
            return await self.claim_silence(
                analysis_id=analysis_id,
                chat_id=chat_id,
                user_id=user_id,
                user_name=user_name,
                matchers=matchers,
                ends_at=ends_at,
            )
        return _action(existing), False

    @translated("recording a silence")
    async def activate_silence(self, action_id: int, silence_id: str) -> AlertAction:
        row = await self._pool.fetchrow(
            f"""UPDATE alert_actions SET state = 'active', silence_id = $2
                WHERE id = $1 RETURNING {_COLUMNS}""",
            action_id,
            silence_id,
        )
        if row is None:
            raise NotFoundError(f"no alert action {action_id}")
        return _action(row)

    @translated("dropping a silence Alertmanager refused")
    async def drop_pending(self, action_id: int) -> None:
        await self._pool.execute(
            "DELETE FROM alert_actions WHERE id = $1 AND state = 'pending'", action_id
        )

    @translated("recording an acknowledgement")
    async def acknowledge(
        self, *, analysis_id: int, chat_id: int, user_id: int, user_name: str
    ) -> tuple[AlertAction, bool]:
        row = await self._pool.fetchrow(
            f"""INSERT INTO alert_actions (analysis_id, chat_id, kind, user_id, user_name)
                VALUES ($1, $2, 'ack', $3, $4)
                ON CONFLICT DO NOTHING RETURNING {_COLUMNS}""",
            analysis_id,
            chat_id,
            user_id,
            user_name[:200],
        )
        if row is not None:
            return _action(row), True
        existing = await self._pool.fetchrow(
            f"""SELECT {_COLUMNS} FROM alert_actions
                WHERE analysis_id = $1 AND chat_id = $2 AND kind = 'ack'""",
            analysis_id,
            chat_id,
        )
        assert existing is not None
        return _action(existing), False

    @translated("reading the silences of a chat")
    async def actions(self, chat_id: int) -> builtins.list[AlertAction]:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(_ENDED)
            rows = await conn.fetch(
                f"""SELECT {_COLUMNS} FROM alert_actions
                    WHERE chat_id = $1 AND state <> 'expired'
                    ORDER BY created_at, id LIMIT 500""",
                chat_id,
            )
        return [_action(r) for r in rows]

    @translated("reading a silence")
    async def action(self, action_id: int) -> AlertAction | None:
        row = await self._pool.fetchrow(
            f"SELECT {_COLUMNS} FROM alert_actions WHERE id = $1", action_id
        )
        return None if row is None else _action(row)

    @translated("queueing an alert analysis again")
    async def investigate_again(self, analysis_id: int, chat_id: int) -> bool:
        value = await self._pool.fetchval(
            """UPDATE alert_analyses SET status = 'queued', again_chat = $2, round = round + 1,
                                         updated_at = now()
               WHERE id = $1 AND status IN ('posted', 'failed') AND resolved_at IS NULL
               RETURNING id""",
            analysis_id,
            chat_id,
        )
        return value is not None

    @translated("expiring a silence")
    async def expire(self, action_id: int) -> bool:
        value = await self._pool.fetchval(
            """UPDATE alert_actions SET state = 'expired', expired_at = now()
               WHERE id = $1 AND kind = 'silence' AND state = 'active' RETURNING id""",
            action_id,
        )
        return value is not None
