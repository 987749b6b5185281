"""Webhook mode: Telegram (or a load balancer in front of N replicas) POSTs updates here.

`build_webhook_app` makes the aiohttp `web.Application`: the update route (aiogram's
`SimpleRequestHandler`, which checks ``X-Telegram-Bot-Api-Secret-Token`` against
WEBHOOK_SECRET and answers 401 otherwise), plus ``/healthz``. Other routes (the ops
server's /metrics, an HTTP API) can be added to the same app before it starts.

An update is answered 200 only once it is in the inbox; when the database cannot take
it the answer is 503 and Telegram delivers it again later (the inbox ignores copies).
Processing happens in the inbox worker, never in the request.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from urllib.parse import urlsplit

from aiogram import Bot, Dispatcher
from aiogram.webhook.aiohttp_server import SimpleRequestHandler
from aiohttp import web

from bot.delivery.ports import Inbox
from bot.telegram.inbox import MAX_UPDATE_BYTES, store_update
from reasoning_core import StoreError

log = logging.getLogger(__name__)


class InboxRequestHandler(SimpleRequestHandler):
    """aiogram's webhook handler (secret check, bot), storing each update in the inbox."""

    def __init__(
        self,
        *,
        dispatcher: Dispatcher,
        bot: Bot,
        secret_token: str,
        inbox: Inbox,
        stored: Callable[[], None],
    ) -> None:
        super().__init__(dispatcher, bot, handle_in_background=False, secret_token=secret_token)
        self._inbox = inbox
        self._stored = stored

    async def close(self) -> None:
        """Nothing: the bot's session belongs to whoever built the bot, and is closed there."""

    async def _handle_request(self, bot: Bot, request: web.Request) -> web.Response:
        body = await request.content.read(MAX_UPDATE_BYTES + 1)
        size = len(body) if len(body) <= MAX_UPDATE_BYTES else (request.content_length or 0)
        try:
            payload = json.loads(body) if len(body) <= MAX_UPDATE_BYTES else {}
        except ValueError:
            log.warning("webhook: a body that is not JSON was refused")
            return web.json_response({"ok": False, "description": "not JSON"}, status=400)
        if len(body) > MAX_UPDATE_BYTES:
            payload = _id_only(body)
            size = max(size, len(body))
        try:
            new = await store_update(self._inbox, payload, size=size)
        except StoreError as e:
            log.error("webhook: update not stored, Telegram will deliver it again: %s", e)
            return web.json_response({"ok": False}, status=503)
        if new:
            self._stored()
        return web.json_response({})

    async def _handle_request_background(self, bot: Bot, request: web.Request) -> web.Response:
        return await self._handle_request(bot, request)


def _id_only(head: bytes) -> dict[str, object]:
    """The update_id of a body too large to parse, read from its start (Telegram puts it
    first); without one there is nothing to store the rejection under."""
    text = head[:200].decode("utf-8", errors="replace")
    marker = '"update_id":'
    at = text.find(marker)
    if at < 0:
        return {}
    digits = ""
    for ch in text[at + len(marker) :].lstrip():
        if not ch.isdigit():
            break
        digits += ch
    return {"update_id": int(digits)} if digits else {}


def webhook_path(url: str) -> str:
    """The path the app serves: the path of WEBHOOK_URL ("/" becomes "/webhook")."""
    path = urlsplit(url).path
    return path if path and path != "/" else "/webhook"


def build_webhook_app(
    *,
    dispatcher: Dispatcher,
    bot: Bot,
    inbox: Inbox,
    secret_token: str,
    path: str,
    stored: Callable[[], None] = lambda: None,
) -> web.Application:
    """The webhook's aiohttp app; add more routes before starting it."""
    app = web.Application(client_max_size=MAX_UPDATE_BYTES * 4)
    handler = InboxRequestHandler(
        dispatcher=dispatcher, bot=bot, secret_token=secret_token, inbox=inbox, stored=stored
    )
    handler.register(app, path=path)

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    app.router.add_get("/healthz", healthz)
    return app
