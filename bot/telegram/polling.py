"""Long polling into the inbox: an update is acknowledged (the next getUpdates' offset
moves past it) only after it is stored, so a crash between the two loses nothing —
Telegram delivers it again and the inbox ignores the copy.

Only one process may long-poll a bot (Telegram's rule); replicas use the webhook.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from aiogram import Bot
from aiogram.exceptions import ClientDecodeError, TelegramAPIError, TelegramConflictError
from aiogram.methods import GetUpdates

from bot.delivery.drain import Drain
from bot.delivery.ports import Inbox
from bot.telegram.inbox import store_update
from reasoning_core import StoreError

log = logging.getLogger(__name__)

_MAX_PAUSE = 30.0


async def poll_into_inbox(
    bot: Bot,
    inbox: Inbox,
    *,
    poll_sec: int,
    allowed_updates: Sequence[str] | None = None,
    stored: Callable[[], None] = lambda: None,
    drain: Drain | None = None,
) -> None:
    """getUpdates until the drain begins (forever without one); each batch goes into the
    inbox before the offset moves on.

    `stored` is called after each batch with new updates (the local worker's wake-up). The
    drain ends a long poll at once, never the storing of a batch (what was fetched and not
    acknowledged, Telegram gives the next process again).
    """
    drain = drain or Drain()
    offset: int | None = None
    pause = 0.5
    while not drain.begun:
        try:
            batch = await drain.until_begun(_get_updates(bot, offset, poll_sec, allowed_updates))
            if batch is None:
                return
            new = 0
            for payload in batch:
                new += await store_update(inbox, payload)
        except TelegramConflictError as e:
            log.error(
                "polling paused %.1fs: %s — a webhook is set or another process polls this "
                "bot; use `whytree run --webhook` for several replicas, or deleteWebhook",
                pause,
                e.message,
            )
            await drain.until_begun(asyncio.sleep(pause))
            pause = min(pause * 2, _MAX_PAUSE)
            continue
        except (TelegramAPIError, StoreError) as e:
            log.error("polling paused %.1fs: %s", pause, e)
            await drain.until_begun(asyncio.sleep(pause))
            pause = min(pause * 2, _MAX_PAUSE)
            continue
        pause = 0.5
        ids = [p["update_id"] for p in batch if isinstance(p.get("update_id"), int)]
        if ids:
            offset = max(ids) + 1
        if new:
            stored()


async def _get_updates(
    bot: Bot, offset: int | None, poll_sec: int, allowed: Sequence[str] | None
) -> list[dict[str, Any]]:
    """The raw updates: even a batch aiogram cannot parse is stored, its bad ones rejected."""
    method = GetUpdates(offset=offset, timeout=poll_sec, allowed_updates=list(allowed or []))
    try:
        updates = await bot(method, request_timeout=poll_sec + 10)
    except ClientDecodeError as e:
        data = e.data if isinstance(e.data, dict) else {}
        result = data.get("result")
        if not data.get("ok") or not isinstance(result, list):
            raise TelegramAPIError(method, f"unreadable getUpdates answer: {e.message}") from e
        return [u if isinstance(u, dict) else {"value": u} for u in result]
    return [u.model_dump(mode="json", exclude_none=True, by_alias=True) for u in updates]
