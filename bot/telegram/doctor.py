"""Telegram: is the token a bot's (getMe), and is a webhook in the way of long polling?"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from aiogram import Bot
from aiogram.exceptions import (
    ClientDecodeError,
    TelegramAPIError,
    TelegramNetworkError,
    TelegramNotFound,
    TelegramUnauthorizedError,
)
from aiogram.utils.token import TokenValidationError

from bot.config import TelegramSettings
from bot.doctor.report import Finding
from bot.telegram.process import build_bot

PART = "Telegram"
WEBHOOK_PART = "Telegram webhook"
BOTFATHER = "talk to @BotFather in Telegram (/newbot or /token) and put the token in .env"


class TelegramProblem(Exception):
    """Telegram cannot be used with these settings; the message says what to do."""


@dataclass(frozen=True, slots=True)
class BotIdentity:
    id: int
    username: str
    webhook_url: str

    @property
    def link(self) -> str:
        return f"https://t.me/{self.username}"


async def bot_identity(telegram: TelegramSettings, *, limit_sec: float) -> BotIdentity:
    """getMe and getWebhookInfo, each within `limit_sec`; `TelegramProblem` otherwise."""
    try:
        bot = build_bot(telegram)
    except TokenValidationError as e:
        raise TelegramProblem(
            "TELEGRAM_BOT_TOKEN is not shaped like a bot token (123456789:AA...): "
            f"copy it again — {BOTFATHER}"
        ) from e
    try:
        return await _ask(bot, limit_sec)
    finally:
        await bot.session.close()


async def _ask(bot: Bot, limit_sec: float) -> BotIdentity:
    seconds = max(1, round(limit_sec))
    try:
        async with asyncio.timeout(limit_sec):
            me = await bot.get_me(request_timeout=seconds)
            webhook = await bot.get_webhook_info(request_timeout=seconds)
    except TelegramUnauthorizedError as e:
        raise TelegramProblem(f"Telegram refused TELEGRAM_BOT_TOKEN (401): {BOTFATHER}") from e
    except TelegramNotFound as e:
        raise TelegramProblem(
            "Telegram answered 404: the token or TELEGRAM_API_URL is wrong — " + BOTFATHER
        ) from e
    except (TimeoutError, TelegramNetworkError) as e:
        raise TelegramProblem(
            f"Telegram did not answer within {limit_sec:g}s: "
            "check the network and TELEGRAM_API_URL"
        ) from e
    except TelegramAPIError as e:
        raise TelegramProblem(f"Telegram refused getMe: {e.message}") from e
    except ClientDecodeError as e:  # a proxy's error page, still there after the retries
        raise TelegramProblem(
            "Telegram's answer to getMe was not the Bot API's JSON (a proxy or a wrong "
            "TELEGRAM_API_URL?)"
        ) from e
    return BotIdentity(id=me.id, username=me.username or str(me.id), webhook_url=webhook.url)


async def check_telegram(telegram: TelegramSettings, *, limit_sec: float) -> list[Finding]:
    if telegram.bot_token is None:
        return [
            Finding.off(
                PART,
                "not configured: `whytree run` opens the terminal chat",
                f"for the Telegram bot, {BOTFATHER} as TELEGRAM_BOT_TOKEN=...",
            )
        ]
    try:
        identity = await bot_identity(telegram, limit_sec=limit_sec)
    except TelegramProblem as e:
        return [Finding.fail(PART, "the bot cannot log in", str(e))]
    findings = [Finding.ok(PART, f"@{identity.username} — {identity.link}")]
    if identity.webhook_url and identity.webhook_url == telegram.webhook_url:
        findings.append(
            Finding.ok(WEBHOOK_PART, "set to WEBHOOK_URL: `whytree run --webhook` receives them")
        )
    elif identity.webhook_url:
        findings.append(
            Finding.fail(
                WEBHOOK_PART,
                f"a webhook is set ({identity.webhook_url}): long polling gets no updates",
                "remove it (deleteWebhook), or stop the deployment that set it",
            )
        )
    else:
        findings.append(Finding.ok(WEBHOOK_PART, "none: long polling receives the updates"))
    return findings
