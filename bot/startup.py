"""What `whytree run` says as it starts: how to get a token, or where to find the bot."""

from __future__ import annotations

from bot.config import Settings
from bot.doctor.telegram import BotIdentity, TelegramProblem, bot_identity
from reasoning_core.errors import ConfigurationError

#: How long start-up waits for Telegram before saying it did not answer.
TELEGRAM_START_LIMIT_SEC = 15.0

NO_TOKEN_HELP = """\
No Telegram bot token yet, so whytree opens the terminal chat instead.
To run it as a Telegram bot:
  1. In Telegram, talk to @BotFather: send /newbot and pick a name; it answers with a token
     like 123456789:AAE...
  2. Put it in the file .env in this directory:  TELEGRAM_BOT_TOKEN=123456789:AAE...
  3. Run `make run` (or `whytree run`) again; `whytree doctor` checks the set-up.
"""


async def announce_bot(settings: Settings) -> BotIdentity:
    """The bot's @username and link; a token Telegram refuses is a `ConfigurationError`."""
    try:
        return await bot_identity(settings, limit_sec=TELEGRAM_START_LIMIT_SEC)
    except TelegramProblem as e:
        raise ConfigurationError(str(e)) from e


def started_text(identity: BotIdentity) -> str:
    return (
        f"whytree is @{identity.username} on Telegram: open {identity.link} and ask a question."
        " Ctrl+C stops it."
    )
