"""Alert analyses in PostgreSQL: ``alert_analyses`` and ``alert_fingerprints`` (`AlertStore`).

Deduplication is the database's: a partial unique index allows one open analysis
per key (runbook + parameters), so however many notifications arrive at once,
concurrent inserts meet in ``ON CONFLICT`` and only one analysis starts. Workers
claim with ``FOR UPDATE SKIP LOCKED``; a running analysis whose heartbeat is old
belongs to a dead process and is claimed again.
"""

from __future__ import annotations

import builtins
import logging
from datetime import datetime
from typing import Any

import asyncpg

from reasoning_core import (
    AlertAnalysis,
    Answer,
    FiringOutcome,
    NewAlertAnalysis,
    NotFoundError,
    PostedMessage,
)
from storage.errors import translated

log = logging.getLogger(__name__)

_COLUMNS = (
    "id, dedup_key, alertname, runbook, parameters, question, language, chats, status,"
    " attempts, answer, report_html, matchers, messages, resolved_at, resolved_posted,"
    " again_chat, round, condition, created_at, updated_at,"
    " (SELECT min(f.starts_at) FROM alert_fingerprints f"
    "  WHERE f.analysis_id = alert_analyses.id) AS started_at"
)

_REPEAT = """
    SELECT f.analysis_id FROM alert_fingerprints f
    JOIN alert_analyses a ON a.id = f.analysis_id
    WHERE f.fingerprint = $1 AND f.resolved_at IS NULL AND a.resolved_at IS NULL
    FOR UPDATE OF f"""

#: A posted report's analysis takes in new alerts of its key for this long after its last
#: activity; an alert of the same key that began later is a new incident, not this one.
#: (An analysis stays open until whytree hears every one of its alerts resolve; one
#: resolution never heard — a notification lost, an alert of the group still pending —
#: would otherwise swallow every later incident of the key: no report at all.)
REOPEN_AFTER_SEC = 600

_SUPERSEDE = """
    UPDATE alert_analyses SET resolved_at = coalesce($2, now()), resolved_posted = true,
                              updated_at = now()
    WHERE dedup_key = $1 AND resolved_at IS NULL AND status IN ('posted', 'failed')
      AND updated_at < coalesce($2, now()) - make_interval(secs => $3)
    RETURNING id"""

_OPEN = """
    INSERT INTO alert_analyses (dedup_key, alertname, runbook, parameters, question,
                                language, chats, report_html, matchers, condition)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
    ON CONFLICT (dedup_key) WHERE resolved_at IS NULL DO UPDATE
        SET chats = ARRAY(SELECT DISTINCT c FROM unnest(alert_analyses.chats || EXCLUDED.chats) c),
            updated_at = now()
    RETURNING id, (xmax = 0) AS created"""

_LINK = """
    INSERT INTO alert_fingerprints (fingerprint, analysis_id, starts_at)
    VALUES ($1, $2, $3)
    ON CONFLICT (fingerprint) DO UPDATE
        SET analysis_id = EXCLUDED.analysis_id, starts_at = EXCLUDED.starts_at,
            last_seen_at = now(), resolved_at = NULL"""

_CLAIM = f"""
    UPDATE alert_analyses SET status = 'running', attempts = attempts + 1,
                              heartbeat_at = now(), updated_at = now()
    WHERE id = (
        SELECT id FROM alert_analyses
        WHERE status = 'queued'
           OR (status = 'running' AND heartbeat_at < now() - make_interval(secs => $1))
        ORDER BY created_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
    )
    RETURNING {_COLUMNS}"""

_LAST_RESOLVED = f"""
    UPDATE alert_analyses SET resolved_at = $2, updated_at = now()
    WHERE id = $1 AND resolved_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM alert_fingerprints
                      WHERE analysis_id = $1 AND resolved_at IS NULL)
    RETURNING {_COLUMNS}"""


def _analysis(row: asyncpg.Record) -> AlertAnalysis:
    return AlertAnalysis.model_validate(dict(row))


class PgAlertStore:
    """`AlertStore` on PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        self._pool = pool

    @translated("recording a firing alert")
    async def record_firing(
        self, fingerprint: str, *, starts_at: datetime | None, analysis: NewAlertAnalysis
    ) -> tuple[FiringOutcome, int]:
        """Duplicate, joined or started, in one transaction (see the module doc). An open
        analysis whose report was posted `REOPEN_AFTER_SEC` before the alert began is
        closed (no "resolved" edit: whytree did not see it resolve) and a new one starts."""
        async with self._pool.acquire() as conn, conn.transaction():
            known = await conn.fetchval(_REPEAT, fingerprint)
            if known is not None:
                await conn.execute(
                    "UPDATE alert_fingerprints SET last_seen_at = now() WHERE fingerprint = $1",
                    fingerprint,
                )
                return "duplicate", int(known)
            superseded = await conn.fetchval(
                _SUPERSEDE, analysis.dedup_key, starts_at, float(REOPEN_AFTER_SEC)
            )
            if superseded is not None:
                log.info(
                    "alert %s began %d s or more after analysis %d was posted: a new incident, "
                    "a new analysis",
                    analysis.alertname,
                    REOPEN_AFTER_SEC,
                    superseded,
                )
            row = await conn.fetchrow(
                _OPEN,
                analysis.dedup_key,
                analysis.alertname,
                analysis.runbook,
                analysis.parameters,
                analysis.question,
                analysis.language,
                analysis.chats,
                analysis.report_html,
                analysis.matchers,
                analysis.condition.model_dump() if analysis.condition else None,
            )
            assert row is not None
            await conn.execute(_LINK, fingerprint, row["id"], starts_at)
            return ("started" if row["created"] else "joined"), int(row["id"])

    @translated("recording a resolved alert")
    async def record_resolved(
        self, fingerprint: str, *, ends_at: datetime
    ) -> AlertAnalysis | None:
        """Resolve the alert; the analysis if none of its alerts fires any more."""
        async with self._pool.acquire() as conn, conn.transaction():
            analysis_id = await conn.fetchval(
                """UPDATE alert_fingerprints SET resolved_at = $2, last_seen_at = now()
                   WHERE fingerprint = $1 AND resolved_at IS NULL RETURNING analysis_id""",
                fingerprint,
                ends_at,
            )
            if analysis_id is None:
                return None
            # The alerts of one analysis often resolve at once, one notification per
            # Alertmanager group: each transaction would see the others' alerts still firing
            # and none would resolve it. Locked, the last to come sees the others resolved.
            await conn.execute(
                "SELECT 1 FROM alert_analyses WHERE id = $1 FOR UPDATE", analysis_id
            )
            row = await conn.fetchrow(_LAST_RESOLVED, analysis_id, ends_at)
            return None if row is None else _analysis(row)

    @translated("counting queued alert analyses")
    async def queued(self) -> int:
        value = await self._pool.fetchval(
            "SELECT count(*) FROM alert_analyses WHERE status IN ('queued', 'running')"
        )
        return int(value or 0)

    @translated("claiming an alert analysis")
    async def claim(self, *, stale_after_sec: float) -> AlertAnalysis | None:
        row = await self._pool.fetchrow(_CLAIM, float(stale_after_sec))
        return None if row is None else _analysis(row)

    @translated("recording an alert heartbeat")
    async def heartbeat(self, analysis_id: int) -> None:
        await self._pool.execute(
            "UPDATE alert_analyses SET heartbeat_at = now() WHERE id = $1", analysis_id
        )

    @translated("handing an alert analysis back")
    async def hand_back(self, analysis_id: int) -> None:
        await self._pool.execute(
            """UPDATE alert_analyses SET status = 'queued', heartbeat_at = NULL,
                                         attempts = greatest(attempts - 1, 0), updated_at = now()
               WHERE id = $1 AND status = 'running'""",
            analysis_id,
        )

    @translated("recording a posted alert report")
    async def posted(
        self,
        analysis_id: int,
        *,
        answer: Answer | None,
        report_html: str,
        messages: builtins.list[PostedMessage],
    ) -> AlertAnalysis:
        row = await self._pool.fetchrow(
            f"""UPDATE alert_analyses SET status = 'posted', answer = $2, report_html = $3,
                       messages = $4, again_chat = NULL, updated_at = now()
                WHERE id = $1 RETURNING {_COLUMNS}""",
            analysis_id,
            None if answer is None else answer.model_dump(mode="json"),
            report_html,
            [m.model_dump() for m in messages],
        )
        if row is None:
            raise NotFoundError(f"no alert analysis {analysis_id}")
        return _analysis(row)

    @translated("failing an alert analysis")
    async def failed(self, analysis_id: int, error: str) -> None:
        await self._pool.execute(
            """UPDATE alert_analyses SET status = 'failed', error = $2, updated_at = now()
               WHERE id = $1""",
            analysis_id,
            error[:1000],
        )

    @translated("taking the resolved edit of an alert report")
    async def take_resolved_edit(self, analysis_id: int) -> bool:
        value = await self._pool.fetchval(
            """UPDATE alert_analyses SET resolved_posted = true, updated_at = now()
               WHERE id = $1 AND resolved_at IS NOT NULL AND NOT resolved_posted
                 AND status = 'posted'
               RETURNING id""",
            analysis_id,
        )
        return value is not None

    @translated("counting alert analyses")
    async def counts(self) -> dict[str, int]:
        rows = await self._pool.fetch(
            "SELECT status, count(*) AS n FROM alert_analyses GROUP BY status"
        )
        counts = {str(r["status"]): int(r["n"]) for r in rows}
        fingerprints = await self._pool.fetchval("SELECT count(*) FROM alert_fingerprints")
        counts["fingerprints"] = int(fingerprints or 0)
        return counts
