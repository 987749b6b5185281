"""What `whytree run` says as it starts: how to get a token, or where to find the bot."""

from __future__ import annotations

from bot.config import ApiSettings, LLMSettings, TelegramSettings
from bot.telegram.doctor import BotIdentity, TelegramProblem, bot_identity
from bot.wiring.app import build_chat_model
from reasoning_core.errors import ConfigurationError

#: How long start-up waits for Telegram, or the LLM, before saying it did not answer.
TELEGRAM_START_LIMIT_SEC = 15.0
LLM_START_LIMIT_SEC = 10.0

NO_TOKEN_HELP = """\
No Telegram bot token yet, so whytree opens the terminal chat instead.
To run it as a Telegram bot:
  1. In Telegram, talk to @BotFather: send /newbot and pick a name; it answers with a token
     like 123456789:AAE...
  2. Put it in the file .env in this directory:  TELEGRAM_BOT_TOKEN=123456789:AAE...
  3. Run `make run` (or `whytree run`) again; `whytree doctor` checks the set-up.
"""


async def announce_bot(telegram: TelegramSettings) -> BotIdentity:
    """The bot's @username and link; a token Telegram refuses is a `ConfigurationError`."""
    try:
        return await bot_identity(telegram, limit_sec=TELEGRAM_START_LIMIT_SEC)
    except TelegramProblem as e:
        raise ConfigurationError(str(e)) from e


def started_text(identity: BotIdentity) -> str:
    return (
        f"whytree is @{identity.username} on Telegram: open {identity.link} and ask a question."
        " Ctrl+C stops it."
    )


async def llm_warning(llm: LLMSettings) -> str | None:
    """One line when a configured LLM does not answer a tiny call (a 401, an HTML page, a
    hang): whytree still starts, and questions go the way they go without a model."""
    limit = min(llm.timeout_sec, LLM_START_LIMIT_SEC)
    model = build_chat_model(llm.model_copy(update={"timeout_sec": limit}))
    if model is None:
        return None
    try:
        problem = await model.problem()
    finally:
        await model.aclose()
    if problem is None:
        return None
    return f"whytree: the LLM does not answer ({problem}); `whytree doctor` says more"


def api_text(api: ApiSettings) -> str | None:
    """With API_LISTEN: where the API and the alert receiver are, and a sample alert to send
    with curl (the token is read from the environment, never printed)."""
    if api.listen is None:
        return None
    host, _, port = api.listen.rpartition(":")
    url = f"http://{host if host not in ('', '0.0.0.0') else '127.0.0.1'}:{port}"
    sample = (
        '{"version":"4","status":"firing","receiver":"whytree","groupKey":"demo",'
        '"alerts":[{"status":"firing","fingerprint":"demo-10291",'
        '"labels":{"alertname":"CellTrafficDrop","cell":"10291"},'
        '"startsAt":"2024-05-20T08:00:00Z","endsAt":"0001-01-01T00:00:00Z"}]}'
    )
    return (
        f"The HTTP API and the Alertmanager receiver listen on {url} "
        f"(OpenAPI: {url}/v1/openapi.json). Send a sample alert:\n"
        f'  curl -H "Authorization: Bearer $ALERT_WEBHOOK_TOKEN" '
        f"-H 'Content-Type: application/json' -d '{sample}' {url}/alerts/alertmanager"
    )
