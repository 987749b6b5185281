"""What delivery needs from storage, as Protocols (storage/inbox.py, outbox.py and
leases.py implement them; bot/wiring/app.py wires them in). Store methods raise `StoreError`."""

from __future__ import annotations

from typing import Any, Literal, Protocol

#: What storing an update found: a new update, a new one whose id its bot used before for
#: another body (Telegram re-uses ids after a week of silence), or the same update again.
Arrival = Literal["new", "reused", "redelivery"]


class InboxItem(Protocol):
    @property
    def id(self) -> int:
        """The stored update's row: unique across bots and re-used update ids."""
        ...

    @property
    def bot_id(self) -> int: ...
    @property
    def update_id(self) -> int: ...
    @property
    def payload(self) -> dict[str, Any]: ...
    @property
    def chat_id(self) -> int | None: ...
    @property
    def attempts(self) -> int: ...


class Inbox(Protocol):
    """One bot's inbox: it stores and claims that bot's updates only."""

    async def add(
        self, update_id: int, payload: dict[str, Any], *, chat_id: int | None
    ) -> Arrival:
        """Store an update (nothing is stored for a redelivery)."""
        ...

    async def add_claimed(
        self,
        update_id: int,
        payload: dict[str, Any],
        *,
        chat_id: int | None,
        owner: str,
        lease_sec: float,
    ) -> tuple[Arrival, InboxItem | None]:
        """Store a new update, claimed for `owner` at once unless older ones wait."""
        ...

    async def reject(self, update_id: int, payload: dict[str, Any], reason: str) -> None: ...

    async def claim(self, owner: str, *, lease_sec: float) -> InboxItem | None: ...

    async def renew(self, item_id: int, owner: str, *, lease_sec: float) -> bool: ...

    async def finish(
        self,
        item_id: int,
        owner: str,
        *,
        status: str = "done",
        error: str | None = None,
        release_chat: str | None = None,
    ) -> None:
        """The outcome; `release_chat`: drop that holder's chat lock in the same trip."""
        ...

    async def retry_later(
        self, item_id: int, owner: str, *, after_sec: float, release_chat: str | None = None
    ) -> None: ...

    async def hand_back(
        self, item_id: int, owner: str, *, release_chat: str | None = None
    ) -> None:
        """Pending again and claimable by any process at once (this one stops before it
        could finish); the claim does not count as an attempt."""
        ...


class OutboxEntry(Protocol):
    @property
    def status(self) -> str: ...
    @property
    def result(self) -> Any: ...


class Outbox(Protocol):
    async def begin(
        self, key: str, *, chat_id: int | None, method: str, request: dict[str, Any]
    ) -> OutboxEntry: ...

    async def sent(self, key: str, result: Any) -> None: ...

    async def attempt_failed(self, key: str, error: str, *, final: bool) -> None: ...


class Leases(Protocol):
    async def acquire(
        self, scope: str, name: str, holder: str, *, limit: int, ttl_sec: float
    ) -> bool: ...

    async def release(self, scope: str, name: str, holder: str) -> None: ...

    async def renew_all(self, holder: str, *, ttl_sec: float) -> None: ...

    async def held(self, scope: str, name: str | None = None) -> int: ...


class RateHits(Protocol):
    async def hit(
        self, subject: int, key: str, *, limit: int, window_sec: float, scope: str = "question"
    ) -> float:
        """0 with the hit `key` of `subject` (a user, or an API key: `scope`) counted, else
        the seconds until one is allowed."""
        ...


class Retention(Protocol):
    async def purge(self, kind: str, *, horizon_sec: float, limit: int) -> int:
        """Delete at most `limit` records of `kind` older than the horizon; how many went."""
        ...


class QuestionWindow(Protocol):
    """Questions per user per minute (bot/delivery/limits.py `SharedWindow`)."""

    limit: int

    async def check(self, key: int) -> float:
        """0 when allowed (and counted), else the seconds until a question is allowed."""
        ...
