"""Capability links to an analysis page, kept as token hashes."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class TreeLinkStore(Protocol):
    """Links to one tree's page. Only a hash of each token is stored (never the token).

    Raises only `StoreError` subclasses (`NotFoundError` for an unknown tree).
    """

    async def add(self, *, tree_id: str, token_hash: bytes, expires_at: datetime) -> None:
        """Store a new link to `tree_id`, valid until `expires_at`."""
        ...

    async def tree_of(self, token_hash: bytes, *, now: datetime) -> str | None:
        """The tree a live link (known, not revoked, not expired at `now`) opens, else None."""
        ...

    async def revoke(self, tree_id: str, *, now: datetime) -> int:
        """Revoke every live link to `tree_id`; returns how many there were."""
        ...
