"""The update being answered now: a context variable set by the inbox worker.

Every reply sent while an update is answered takes the next key of that update, named
after its row in the inbox (``i42:0``, ``i42:1``, ...): unique across bots and across
update ids Telegram uses again, so one bot's reply is never taken for another's.
Processing the update again after a crash sends the same replies in the same order, so
each key names the same reply both times and the outbox can tell what was already sent.
Courtesy messages that change from run to run
(live progress) are sent inside `transient()` and take no key.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Delivery:
    """What the worker knows about the update it is answering."""

    #: The update's row in the inbox (`InboxItem.id`).
    item_id: int
    #: The bot the update came to: a chat's lock is the chat's with this bot.
    bot_id: int = 0
    #: Which time the update is being processed (1 = the first).
    attempt: int = 1
    #: Replies keyed so far.
    sent: int = 0
    #: Set when the update could not be answered for a reason that will pass (the
    #: database is unreachable): it is answered again later, not failed.
    retry_later: bool = False
    #: The keys' prefix when the replies are not an update's (an alert report: its
    #: analysis and round); the update's row, ``i42``, when empty.
    name: str = ""

    @property
    def holder(self) -> str:
        """The name of this update's leases (chat lock, deep slot, rate-limit hit)."""
        return self.name or f"i{self.item_id}"

    def next_key(self) -> str:
        key = f"{self.holder}:{self.sent}"
        self.sent += 1
        return key


_current: ContextVar[Delivery | None] = ContextVar("whytree_delivery", default=None)
_transient: ContextVar[bool] = ContextVar("whytree_transient", default=False)


def current_delivery() -> Delivery | None:
    """The update being answered in this task, or None (start-up, `whytree chat`)."""
    return _current.get()


@contextmanager
def delivering(delivery: Delivery) -> Iterator[Delivery]:
    token = _current.set(delivery)
    try:
        yield delivery
    finally:
        _current.reset(token)


@contextmanager
def transient() -> Iterator[None]:
    """Messages sent in this block are courtesy (progress): not kept in the outbox."""
    token = _transient.set(True)
    try:
        yield
    finally:
        _transient.reset(token)


def is_transient() -> bool:
    return _transient.get()
