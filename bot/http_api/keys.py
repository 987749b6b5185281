"""API keys: made here, shown once, stored only as a SHA-256 (`ApiKeyStore`)."""

from __future__ import annotations

import hashlib
import re
import secrets

from reasoning_core import ApiKey, ApiKeyStore

KEY_PREFIX = "wt_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class ApiKeyError(ValueError):
    """A refused key operation; the message is for the admin."""


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


async def create_key(
    store: ApiKeyStore,
    name: str,
    *,
    user_id: int,
    rate_limit_per_min: int = 60,
    created_by: int | None = None,
) -> tuple[ApiKey, str]:
    """A new key for client `name`, acting as `user_id`; returns it and the secret (once)."""
    if not _NAME.fullmatch(name):
        raise ApiKeyError("a key name is letters, digits, _ . - (at most 64), e.g. grafana")
    if rate_limit_per_min < 0:
        raise ApiKeyError("the rate limit is a number of calls per minute, 0 for none")
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    key = await store.create(
        name=name,
        key_hash=hash_key(secret),
        user_id=user_id,
        rate_limit_per_min=rate_limit_per_min,
        created_by=created_by,
    )
    if key is None:
        raise ApiKeyError(f"there is already a key named {name}")
    return key, secret
