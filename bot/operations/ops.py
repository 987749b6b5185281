"""What access control, limits, admin commands and the ops server share: `Ops`.

Built once by the composition root (bot/wiring/app.py) and handed to handlers through
the dispatcher's workflow data as ``ops``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from importlib import metadata
from pathlib import Path

from bot.access import AccessPolicy
from bot.delivery.limits import LeasedDeepSlots
from bot.delivery.ports import QuestionWindow
from bot.operations.metrics import Metrics
from bot.trees.page.links import TreeLinks
from reasoning_core import (
    AccountStore,
    ApiKeyStore,
    AuditStore,
    RunbookSet,
    StatsStore,
    TreeStore,
    UsageStore,
    load_runbooks,
)


class RunbookLibrary:
    """The loaded runbooks, reloadable at run time (/reload_runbooks).

    Readers take `current` each time they need runbooks, so a reload reaches
    them without a restart.
    """

    def __init__(self, dirs: Sequence[Path] = (), *, include_shipped: bool = True) -> None:
        self.dirs = list(dirs)
        self.include_shipped = include_shipped
        self.current: RunbookSet = load_runbooks(self.dirs, include_shipped=include_shipped)
        self.loaded_at = datetime.now(UTC)

    async def reload(self) -> RunbookSet:
        """Read the files again (in a thread: it is file I/O); never raises for a bad file."""
        self.current = await asyncio.to_thread(
            partial(load_runbooks, self.dirs, include_shipped=self.include_shipped)
        )
        self.loaded_at = datetime.now(UTC)
        return self.current


def app_version() -> str:
    try:
        return metadata.version("whytree")
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True, kw_only=True)
class Ops:
    """Stores, limits and settings for operating the bot."""

    accounts: AccountStore
    audit: AuditStore
    usage: UsageStore
    stats: StatsStore
    trees: TreeStore
    #: Links to analysis pages (/revoke_links revokes them).
    links: TreeLinks
    metrics: Metrics
    window: QuestionWindow
    deep_slots: LeasedDeepSlots
    runbooks: RunbookLibrary
    admin_ids: frozenset[int]
    access_mode: str = "open"
    daily_token_budget: int = 0
    #: Seconds one cheap LLM request takes (raises LLMError); None without an LLM.
    llm_ping: Callable[[], Awaitable[float]] | None = None
    #: The HTTP API's keys (/apikeys, /apikey_revoke); None: not wired.
    api_keys: ApiKeyStore | None = None
    version: str = field(default_factory=app_version)
    started: float = field(default_factory=time.monotonic)

    def uptime(self) -> float:
        return time.monotonic() - self.started

    def access_policy(self) -> AccessPolicy:
        """Who may ask, as every front end decides it (ADMIN_IDS, roles, ACCESS_MODE)."""
        return AccessPolicy(
            accounts=self.accounts, admin_ids=self.admin_ids, access_mode=self.access_mode
        )
