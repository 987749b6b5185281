"""ApiGate: who is calling and whether they may ask now.

In order: the key (``Authorization: Bearer wt_…``; else 401), the key's user's
access (banned, or not on the allowlist in ACCESS_MODE=allowlist: 403 — the same
verdict as in Telegram), the key's own rate limit (calls per minute, counted in
PostgreSQL so it holds across replicas: 429 with Retry-After) and the user's daily
token budget (429). The user is created on
first use, like a Telegram user, so sessions and memory can refer to it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.access import AccessPolicy
from bot.delivery.limits import SharedWindow
from bot.delivery.ports import RateHits
from bot.http_api.keys import hash_key
from bot.wording import budget_text, rate_limit_text
from reasoning_core import ApiKey, ApiKeyStore, StoreError, UsageStore, UserStore

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    reason: str
    retry_after: int | None = None


class ApiGate:
    def __init__(
        self,
        *,
        keys: ApiKeyStore,
        users: UserStore,
        access: AccessPolicy,
        usage: UsageStore,
        hits: RateHits,
        daily_token_budget: int,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._keys = keys
        self._users = users
        self._access = access
        self._usage = usage
        self._budget = daily_token_budget
        self._now = now
        self._hits = hits

    async def key(self, authorization: str | None) -> ApiKey | None:
        """The live key the header carries, or None."""
        scheme, _, secret = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            return None
        return await self._keys.by_hash(hash_key(secret.strip()))

    async def admit(
        self, key: ApiKey, *, language: str = "en", ask: bool = True
    ) -> Refusal | None:
        """None to go ahead; else the refusal. `ask`: a question (rate-limited, budgeted)."""
        user = await self._users.touch(key.user_id, username=key.name, full_name=f"API {key.name}")
        verdict = await self._access.verdict(key.user_id, known=user)
        if verdict.refusal is not None:
            return Refusal(403, "access refused for this key's user")
        if not ask:
            return None
        over = await self._over_budget(key.user_id, language)
        if over is not None:
            return over
        window = SharedWindow(self._hits, limit=key.rate_limit_per_min, scope="api_key")
        retry_after = await window.check(key.id)
        if retry_after > 0:
            text = rate_limit_text(window.limit, retry_after, language)
            return Refusal(429, text, retry_after=max(1, math.ceil(retry_after)))
        return None

    async def _over_budget(self, user_id: int, language: str) -> Refusal | None:
        if self._budget <= 0:
            return None
        now = self._now()
        try:
            usage = await self._usage.on(user_id, now.date())
        except StoreError as e:  # cannot check: answer rather than refuse, as in Telegram
            log.error("could not read the token usage of user %s: %s", user_id, e)
            return None
        used = usage.prompt_tokens + usage.completion_tokens
        if used < self._budget:
            return None
        return Refusal(429, budget_text(used, self._budget, now, language))
