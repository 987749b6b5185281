"""Retention: processed updates, sent replies, spent leases and old rate-limit hits go once
they are older than INBOX_RETENTION_HOURS, so the delivery tables stay flat under load.

`Janitor.run` goes in every process, every `every_sec`; only the one holding the janitor
lease (scope ``janitor`` in the leases table, one holder) works. Its holder dying stops
renewing, and another process takes the lease over. Each run deletes in batches of
`batch` rows (one statement each), at most `max_batches` per kind, and logs what went.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass

from bot.delivery.ports import Leases, Retention
from reasoning_core import StoreError

log = logging.getLogger(__name__)

#: What is deleted, in this order (the kinds storage/retention.py knows).
KINDS = ("updates", "replies", "leases", "rate hits")
_LEASE = ("janitor", "retention")


@dataclass(frozen=True, kw_only=True)
class RetentionPolicy:
    """How old a record may get, and how much one run deletes."""

    horizon_sec: float
    every_sec: float = 300.0
    batch: int = 1000
    max_batches: int = 20


class Janitor:
    """Deletes what is older than the horizon, while it holds the janitor lease."""

    def __init__(
        self, *, retention: Retention, leases: Leases, policy: RetentionPolicy, owner: str
    ) -> None:
        self._retention = retention
        self._leases = leases
        self.policy = policy
        #: Unique per janitor, even for two in one process.
        self.holder = f"janitor:{owner}:{uuid.uuid4().hex[:8]}"
        self.runs = 0

    async def run(self) -> None:
        """A run every `every_sec` until cancelled; the lease is given up on the way out."""
        try:
            while True:
                try:
                    await self.run_once()
                except StoreError as e:  # the next run tries again
                    log.warning("retention run skipped: %s", e)
                await asyncio.sleep(self.policy.every_sec)
        finally:
            try:
                await self._leases.release(*_LEASE, self.holder)
            except StoreError as e:  # it runs out by itself
                log.warning("could not release the janitor lease: %s", e)

    async def run_once(self) -> dict[str, int] | None:
        """One run: rows deleted per kind, or None when another process holds the lease."""
        # The lease outlives two missed runs: a slow run is not taken over mid-way.
        if not await self._leases.acquire(
            *_LEASE, self.holder, limit=1, ttl_sec=self.policy.every_sec * 3
        ):
            return None
        self.runs += 1
        deleted = {kind: await self._purge(kind) for kind in KINDS}
        if any(deleted.values()):
            log.info(
                "retention: deleted %s older than %gh",
                ", ".join(f"{n} {kind}" for kind, n in deleted.items() if n),
                self.policy.horizon_sec / 3600,
            )
        return deleted

    async def _purge(self, kind: str) -> int:
        policy, total = self.policy, 0
        for _ in range(policy.max_batches):
            n = await self._retention.purge(
                kind, horizon_sec=policy.horizon_sec, limit=policy.batch
            )
            total += n
            if n < policy.batch:
                return total
        log.warning(
            "retention: %d %s deleted, more remain older than the horizon; the next run goes on",
            total,
            kind,
        )
        return total
