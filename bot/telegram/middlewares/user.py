"""Who is asking: the user is created on first contact and handed to handlers as `user`."""

from __future__ import annotations

import logging
from typing import Any

from aiogram import BaseMiddleware
from aiogram.types import TelegramObject, User

from bot.telegram.middlewares.base import Handler
from reasoning_core import StoreError, UserStore, clean_text

log = logging.getLogger(__name__)


class UserMiddleware(BaseMiddleware):
    """Creates the user on first contact and refreshes last_seen; puts `user` in the data."""

    def __init__(self, users: UserStore) -> None:
        self._users = users

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        tg_user: User | None = data.get("event_from_user")
        data["user"] = None
        if tg_user is not None and not tg_user.is_bot:
            try:
                data["user"] = await self._users.touch(
                    tg_user.id,
                    username=clean_text(tg_user.username) if tg_user.username else None,
                    full_name=clean_text(tg_user.full_name),
                )
            except StoreError as e:
                # The question can still be answered; only persistence will suffer.
                log.error("could not load user %s: %s", tg_user.id, e)
        return await handler(event, data)
