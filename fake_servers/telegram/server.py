"""A fake Telegram Bot API server over real HTTP, for tests and benchmarks.

Besides text messages it takes photo and document uploads (multipart), checked
against Telegram's limits (a photo: 10 MB, width + height <= 10000, ratio <= 20).

The real bot reaches it through
``AiohttpSession(api=TelegramAPIServer.from_base(fake.base_url))``. It answers
``/bot{token}/{method}`` like Telegram (same JSON envelope, same error
descriptions: HTML parse errors, "message is too long", "message is not
modified"), records every call, queues updates for long polling, and injects
failures (429 with retry_after, 400, 5xx) on demand::

    async with FakeTelegramServer() as fake:
        fake.push_message(chat_id=42, text="hello")
        [reply] = await fake.wait_for_messages(42, 1)

getUpdates follows Telegram's offset rule (updates with ``update_id >= offset``
are returned, earlier ones are confirmed and dropped); an empty long poll
returns after ``min(timeout, poll_cap)`` seconds so tests stop fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Any

from aiohttp import web

from fake_servers.telegram.params import UploadedFile, read_params
from fake_servers.telegram.state import TelegramApiError, TelegramState
from fake_servers.telegram.updates import ChatType, Content

_SHOWN_TEXT = 120  # characters of a message text a recorded call prints
_MIN_TOKEN_SECRET = 10  # the part of a bot token after the colon
#: How long a test waits for a condition by default: generous, so that a busy machine
#: (CI sharing its cores) is slow, not failing; a condition met returns at once.
WAIT_SEC = 30.0


@dataclass
class RecordedCall:
    """One Bot API request as the bot sent it, and what the fake answered."""

    method: str
    params: dict[str, Any]
    status: int = 0  # 0 while the fake is still answering
    description: str | None = None
    result: Any = None
    token: str = ""
    at: float = field(default_factory=time.monotonic)

    @property
    def ok(self) -> bool:
        return self.status == HTTPStatus.OK

    @property
    def chat_id(self) -> int | str | None:
        value: int | str | None = self.params.get("chat_id")
        return value

    @property
    def text(self) -> str:
        return str(self.params.get("text", ""))

    @property
    def caption(self) -> str:
        return str(self.params.get("caption", ""))

    def __str__(self) -> str:
        shown = {k: v for k, v in self.params.items() if k != "text"}
        text = self.text if len(self.text) <= _SHOWN_TEXT else self.text[: _SHOWN_TEXT - 3] + "..."
        outcome = "ok" if self.ok else f"{self.status} {self.description}"
        return f"{self.method} {shown} text={text!r} -> {outcome}"


@dataclass
class _Failure:
    status: int
    description: str
    retry_after: int | None
    remaining: int
    #: Answer this body as text/html instead of Telegram's JSON (a proxy's error page).
    raw_body: str | None = None


class _RawFailure(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(body)
        self.status = status
        self.body = body


#: Every text the bot tried to show a user, from every fake server of this process:
#: (method, text). tests/conftest.py checks them all at the end of the test session.
USER_VISIBLE: list[tuple[str, str]] = []

#: What an internal error looks like in a message: an exception class name or a traceback.
INTERNALS = re.compile(r"\b\w+(?:Error|Exception)\b|Traceback")


#: A line of the user's own software quoted as evidence (“…” or «…»): its exception names
#: are what their service raised, not whytree's internals.
QUOTED = re.compile(r"“[^”\n]*”|«[^»\n]*»")


def internal_leaks(visible: Sequence[tuple[str, str]]) -> list[str]:
    """The (method: text) entries that show a user an exception class name or a traceback
    outside the log lines quoted as evidence."""
    return [
        f"{method}: {text[:300]!r}"
        for method, text in visible
        if INTERNALS.search(QUOTED.sub("", text))
    ]


def _visible_texts(method: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    found = [(method, str(params[k])) for k in ("text", "caption") if params.get(k)]
    found += [
        (method, value.data.decode("utf-8", errors="replace"))
        for value in params.values()
        if isinstance(value, UploadedFile) and not value.filename.endswith((".png", ".svg"))
    ]
    return found


class FakeTelegramServer:
    """Telegram's Bot API on 127.0.0.1 (random port): record, script, inject."""

    def __init__(
        self,
        *,
        bot_id: int = 123456,
        bot_username: str = "whytree_test_bot",
        poll_cap: float = 1.0,
        first_update_id: int = 1001,
    ) -> None:
        self.state = TelegramState(bot_id=bot_id, bot_username=bot_username)
        self.poll_cap = poll_cap
        self.calls: list[RecordedCall] = []
        self._updates: list[dict[str, Any]] = []
        #: Every update queued or posted, in order.
        self.pushed: list[dict[str, Any]] = []
        #: Telegram's update ids are unique per bot: several fakes on one database
        #: (benchmarks) start at different ids.
        self._next_update_id = first_update_id - 1
        self._failures: dict[str, list[_Failure]] = {}
        self._changed = asyncio.Event()  # replaced after every change
        self._chat_changed: dict[Any, asyncio.Event] = {}  # per chat, for load drivers
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._closing = False
        self._deliveries: set[asyncio.Task[None]] = set()
        #: Webhook mode: the HTTP status of every delivery attempt (0: no connection),
        #: and the update ids the webhook accepted.
        self.webhook_answers: list[int] = []
        self.delivered: list[int] = []
        self.webhook_retry_sec = 0.2
        #: Set by the harness that runs a bot against this fake: whether that bot is done
        #: with everything it was sent (nothing stored waits or runs). `wait_idle` reads it.
        self.bot_idle: Callable[[], Awaitable[bool]] | None = None

    # --- lifecycle ---------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        self._closing = True
        self._notify()
        for task in list(self._deliveries):
            task.cancel()
        await asyncio.gather(*self._deliveries, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeTelegramServer:
        await self.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        """For ``TelegramAPIServer.from_base(...)``."""
        return f"http://127.0.0.1:{self._port}"

    # --- what the bot did ----------------------------------------------------------

    def calls_of(self, method: str) -> list[RecordedCall]:
        """Every call of `method`, failed ones included."""
        return [c for c in self.calls if c.method.lower() == method.lower()]

    def _ok_calls(self, method: str, chat_id: int | None) -> list[RecordedCall]:
        return [c for c in self.calls_of(method) if c.ok and chat_id in (None, c.chat_id)]

    def sent_messages(self, chat_id: int | None = None) -> list[RecordedCall]:
        """sendMessage calls Telegram accepted, oldest first."""
        return self._ok_calls("sendMessage", chat_id)

    def sent_photos(self, chat_id: int | None = None) -> list[RecordedCall]:
        """sendPhoto calls Telegram accepted; ``params["photo"]`` is the `UploadedFile`."""
        return self._ok_calls("sendPhoto", chat_id)

    def sent_documents(self, chat_id: int | None = None) -> list[RecordedCall]:
        """sendDocument calls Telegram accepted; ``params["document"]`` is the `UploadedFile`."""
        return self._ok_calls("sendDocument", chat_id)

    def edits(
        self, chat_id: int | None = None, message_id: int | None = None
    ) -> list[RecordedCall]:
        """editMessageText calls Telegram accepted."""
        edits = self._ok_calls("editMessageText", chat_id)
        return [e for e in edits if message_id in (None, e.params.get("message_id"))]

    @property
    def actions(self) -> list[RecordedCall]:
        return self._ok_calls("sendChatAction", None)

    @property
    def callback_answers(self) -> list[RecordedCall]:
        return self._ok_calls("answerCallbackQuery", None)

    # --- failure injection -----------------------------------------------------------

    def fail_next(
        self,
        method: str,
        status: int = 429,
        *,
        retry_after: int | None = None,
        description: str | None = None,
        times: int = 1,
        raw_body: str | None = None,
    ) -> None:
        """Answer the next `times` calls of `method` ("*" for any) with an error.

        429 defaults to retry_after=1; 400 to a "can't parse entities" error. With
        `raw_body` the answer is that text (not JSON), as a proxy in front would send.
        """
        if status == HTTPStatus.TOO_MANY_REQUESTS and retry_after is None:
            retry_after = 1
        if description is None:
            description = _default_description(status, retry_after)
        failure = _Failure(status, description, retry_after, times, raw_body)
        self._failures.setdefault(method.lower(), []).append(failure)

    def _take_failure(self, method: str) -> TelegramApiError | None:
        for key in (method.lower(), "*"):
            queue = self._failures.get(key)
            if queue:
                failure = queue[0]
                failure.remaining -= 1
                if failure.remaining <= 0:
                    queue.pop(0)
                if failure.raw_body is not None:
                    raise _RawFailure(failure.status, failure.raw_body)
                return TelegramApiError(
                    failure.status, failure.description, retry_after=failure.retry_after
                )
        return None

    # --- updates -------------------------------------------------------------------

    def push_message(
        self,
        chat_id: int,
        text: str | None = "hello",
        *,
        user_id: int | None = None,
        chat_type: ChatType = "private",
        username: str | None = None,
        reply_to_bot: bool = False,
        entities: list[dict[str, Any]] | None = None,
        content: Content = "text",
        edited: bool = False,
    ) -> int:
        """Queue a user's message (or sticker/photo/document; `text` is then the caption).

        `entities=None` adds what Telegram clients add: a leading bot_command and
        @mentions. Returns the update_id.
        """
        message = self.state.user_message(
            chat_id=chat_id,
            user_id=user_id if user_id is not None else abs(chat_id),
            text=text,
            chat_type=chat_type,
            username=username,
            content=content,
            entities=entities,
            reply_to_bot=reply_to_bot,
        )
        if edited:
            message["edit_date"] = message["date"]
            return self._push({"edited_message": message})
        return self._push({"message": message})

    def set_user_language(self, user_id: int, language_code: str) -> None:
        """The language `user_id`'s Telegram app is set to, sent with their updates."""
        self.state.user_languages[user_id] = language_code

    def push_callback(
        self,
        chat_id: int,
        user_id: int,
        data: str,
        message_id: int,
        *,
        username: str | None = None,
    ) -> int:
        """Queue a button press on the bot's message `message_id`; returns the update_id."""
        query = self.state.callback_query(
            chat_id=chat_id, user_id=user_id, data=data, message_id=message_id, username=username
        )
        return self._push({"callback_query": query})

    def _push(self, body: dict[str, Any]) -> int:
        self._next_update_id += 1
        return self.push_update({"update_id": self._next_update_id, **body})

    def push_update(self, update: dict[str, Any]) -> int:
        """Queue (or post to the webhook) a whole update as given: a copy of one sent before
        (a redelivery), or a new one under an id used before. Returns its update_id."""
        self.pushed.append(update)
        if self.state.webhook_url:
            self._start_delivery(update)
        else:
            self._updates.append(update)
        self._notify()
        return int(update["update_id"])

    # --- webhook -------------------------------------------------------------------

    def _start_delivery(self, update: dict[str, Any]) -> None:
        task = asyncio.get_running_loop().create_task(self._deliver(update))
        self._deliveries.add(task)
        task.add_done_callback(self._deliveries.discard)

    async def _deliver(self, update: dict[str, Any]) -> None:
        """POST the update to the webhook until it answers 2xx, as Telegram does (which
        keeps trying for hours; here until the fake stops)."""
        import aiohttp  # noqa: PLC0415 - only webhook tests need a client

        headers = {"X-Telegram-Bot-Api-Secret-Token": self.state.webhook_secret}
        timeout = aiohttp.ClientTimeout(total=30)
        while not self._closing:
            try:
                async with (
                    aiohttp.ClientSession(timeout=timeout) as http,
                    http.post(self.state.webhook_url, json=update, headers=headers) as answer,
                ):
                    self.webhook_answers.append(answer.status)
                    if answer.status < HTTPStatus.MULTIPLE_CHOICES:
                        self.delivered.append(update["update_id"])
                        self._notify()
                        return
            except (aiohttp.ClientError, TimeoutError):
                self.webhook_answers.append(0)
            await asyncio.sleep(self.webhook_retry_sec)

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        wait = min(float(params.get("timeout") or 0), self.poll_cap)
        deadline = asyncio.get_running_loop().time() + wait
        while True:
            if offset:
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
            if self._updates or self._closing:
                return self._updates[:limit]
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return []
            await self._wait_change(remaining)

    # --- waiting -------------------------------------------------------------------

    async def wait_for(
        self,
        predicate: Callable[[], bool],
        timeout: float = WAIT_SEC,  # noqa: ASYNC109 - a test helper's deadline
        *,
        chat_id: int | None = None,
    ) -> None:
        """Wait until `predicate()` holds; AssertionError with the call log otherwise.

        With `chat_id`, only calls to that chat wake the waiter: a load driver with many
        chats waiting would otherwise re-check every chat on every call (its CPU is the
        bots')."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"condition not met within {timeout}s\n{self.dump()}")
            if chat_id is None:
                await self._wait_change(min(remaining, 0.05))
            else:
                await self._wait_chat_change(chat_id, min(remaining, 1.0))

    def served(self, update_id: int) -> int:
        """How many getUpdates answers carried that update (long polling serves it again
        each time the bot did not acknowledge it)."""
        return sum(
            1
            for call in self.calls_of("getUpdates")
            if call.ok
            and isinstance(call.result, list)
            and any(isinstance(u, dict) and u.get("update_id") == update_id for u in call.result)
        )

    async def wait_idle(self, timeout: float = WAIT_SEC) -> None:  # noqa: ASYNC109
        """Until the bot under test is done with every update it was sent (its replies are
        all out): what a test waits for before it asserts that nothing else was sent."""
        if self.bot_idle is None:
            raise AssertionError("no bot is registered with this fake (bot_idle is unset)")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not await self.bot_idle():
            if loop.time() > deadline:
                raise AssertionError(f"the bot was still busy after {timeout}s\n{self.dump()}")
            await asyncio.sleep(0.05)

    async def wait_for_messages(
        self,
        chat_id: int,
        count: int,
        timeout: float = WAIT_SEC,  # noqa: ASYNC109
    ) -> list[RecordedCall]:
        """Wait until the bot has sent at least `count` messages to `chat_id`."""
        await self.wait_for(lambda: len(self.sent_messages(chat_id)) >= count, timeout)
        return self.sent_messages(chat_id)

    def dump(self, last: int = 30) -> str:
        """The recent calls (polling left out), one per line."""
        shown = [c for c in self.calls if c.method.lower() != "getupdates"][-last:]
        return "calls:\n" + ("\n".join(f"  {c}" for c in shown) or "  (none)")

    def _notify(self, call: RecordedCall | None = None) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
        if call is not None and (chat := self._chat_changed.get(call.chat_id)) is not None:
            chat.set()

    async def _wait_chat_change(self, chat_id: int, seconds: float) -> None:
        changed = self._chat_changed.setdefault(chat_id, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await changed.wait()
        if changed.is_set():
            self._chat_changed.pop(chat_id, None)

    async def _wait_change(self, seconds: float) -> None:
        changed = self._changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), seconds)

    # --- HTTP ------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        token, method = request.match_info["token"], request.match_info["method"]
        call = RecordedCall(method=method, params=await read_params(request), token=token)
        self.calls.append(call)
        USER_VISIBLE.extend(_visible_texts(method, call.params))
        try:
            call.result = await self._dispatch(token, method, call.params)
        except _RawFailure as e:
            call.status, call.description = e.status, e.body
            self._notify(call)
            return web.Response(text=e.body, status=e.status, content_type="text/html")
        except TelegramApiError as e:
            call.status, call.description = e.status, e.description
            self._notify(call)
            return web.json_response(e.payload(), status=e.status)
        call.status = 200
        self._notify(call)
        return web.json_response({"ok": True, "result": call.result})

    async def _dispatch(self, token: str, method: str, params: dict[str, Any]) -> Any:
        if not _valid_token(token):
            raise TelegramApiError(401, "Unauthorized")
        failure = self._take_failure(method)
        if failure is not None:
            raise failure
        self.state.bot_id = int(token.split(":", maxsplit=1)[0])
        if method.lower() == "getupdates":
            if self.state.webhook_url:
                raise TelegramApiError(
                    409, "Conflict: can't use getUpdates method while webhook is active"
                )
            return await self._get_updates(params)
        handler = self.state.methods.get(method.lower())
        if handler is None:
            raise TelegramApiError(404, "Not Found")
        return handler(params)


def _valid_token(token: str) -> bool:
    bot_id, _, secret = token.partition(":")
    return bot_id.isdigit() and len(secret) >= _MIN_TOKEN_SECRET


def _default_description(status: int, retry_after: int | None) -> str:
    if status == HTTPStatus.TOO_MANY_REQUESTS:
        return f"Too Many Requests: retry after {retry_after}"
    if status == HTTPStatus.BAD_REQUEST:
        return "Bad Request: can't parse entities: injected by the fake server"
    if status >= HTTPStatus.INTERNAL_SERVER_ERROR:
        return "Internal Server Error"
    return f"Error {status}"


__all__: Sequence[str] = [
    "USER_VISIBLE",
    "FakeTelegramServer",
    "RecordedCall",
    "TelegramApiError",
    "internal_leaks",
]
