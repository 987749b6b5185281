"""Capability links to an analysis page: `/t/{token}`.

A token is 32 random bytes (256 bits, `secrets.token_urlsafe`): unguessable, so
the link itself is the permission, like a shared document link. Only its
SHA-256 is stored; a link expires after TREE_LINK_TTL_SEC and admins revoke a
tree's links with /revoke_links. Anything that is not a live token — malformed,
unknown, expired, revoked — resolves to None, and the page answers 404 alike.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from reasoning_core import TreeLinkStore

TOKEN_BYTES = 32
#: token_urlsafe(32) is 43 characters of the URL-safe base64 alphabet.
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")
PAGE_PREFIX = "/t/"


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("ascii")).digest()


def _utcnow() -> datetime:
    return datetime.now(UTC)


class TreeLinks:
    """Makes, opens and revokes links to analysis pages under `public_url`.

    Without a public URL (PUBLIC_URL unset) no new links are made (`enabled` is
    False), but admins can still revoke the ones made before.
    """

    def __init__(
        self,
        store: TreeLinkStore,
        *,
        public_url: str | None,
        ttl_sec: int,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self._store = store
        self._public_url = public_url.rstrip("/") if public_url else None
        self._ttl = timedelta(seconds=ttl_sec)
        self._clock = clock

    @property
    def enabled(self) -> bool:
        return self._public_url is not None

    async def create(self, tree_id: str) -> str | None:
        """A new link to the tree's page (the full URL), None when not `enabled`;
        StoreError if it cannot be kept."""
        if self._public_url is None:
            return None
        token = secrets.token_urlsafe(TOKEN_BYTES)
        expires = self._clock() + self._ttl
        await self._store.add(tree_id=tree_id, token_hash=token_hash(token), expires_at=expires)
        return f"{self._public_url}{PAGE_PREFIX}{token}"

    async def open(self, token: str) -> str | None:
        """The tree a live token opens, else None (malformed ones never reach the store)."""
        if not _TOKEN.fullmatch(token):
            return None
        return await self._store.tree_of(token_hash(token), now=self._clock())

    async def revoke(self, tree_id: str) -> int:
        """Revoke every live link to the tree; returns how many."""
        return await self._store.revoke(tree_id, now=self._clock())
