"""Every update middleware of the dispatcher, in the order the composition root registers them.

Outer (every update, before filters): `NormalisedTextMiddleware` (clean text first),
`UserMiddleware` (who is asking), `LanguageMiddleware` (the language the
handlers speak: aiogram's i18n), `AccessMiddleware` (admin, banned, allowlist; the
log context and the usage owner). Inner (message handlers that are questions):
`OneQuestionPerChatMiddleware` (one question per chat at a time) and
`RateLimitMiddleware` (questions per minute and the daily token budget). The limits
they enforce are held in PostgreSQL (bot/delivery/limits.py), so they hold across
replicas. The bot's outgoing requests have middlewares of their own:
bot/telegram/session.py.
"""

from bot.telegram.middlewares.access import AccessMiddleware
from bot.telegram.middlewares.one_question import ChatLocks, OneQuestionPerChatMiddleware
from bot.telegram.middlewares.rate_limit import RateLimitMiddleware
from bot.telegram.middlewares.text import NormalisedTextMiddleware
from bot.telegram.middlewares.user import UserMiddleware

__all__ = [
    "AccessMiddleware",
    "ChatLocks",
    "NormalisedTextMiddleware",
    "OneQuestionPerChatMiddleware",
    "RateLimitMiddleware",
    "UserMiddleware",
]
