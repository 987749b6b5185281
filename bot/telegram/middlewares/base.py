"""What every update middleware here is handed: the next handler in aiogram's chain."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiogram.types import TelegramObject

#: The next step of the chain: ``await handler(event, data)``.
Handler = Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]]
