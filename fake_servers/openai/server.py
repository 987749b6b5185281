"""A fake OpenAI-compatible server over real HTTP, scripted per test.

Reached by the real SDK: ``AsyncOpenAI(base_url=server.base_url, api_key="test")``.
``POST /v1/chat/completions`` answers from, in order: replies queued with
``queue(...)``, the function set with ``script(fn)``, then ``default``.
``GET /v1/models`` lists one model (cheap health checks)::

    async with FakeOpenAIServer() as server:
        server.queue(Reply.error(429, retry_after=0.1), Reply.json({"answer": "hi"}))
        ...
        assert server.request_count == 2

Replies may be text, JSON, tool calls, errors (429 with Retry-After, 5xx), hangs
and malformed JSON; streaming requests (``stream: true``) get SSE chunks.
``latency`` delays every reply; ``tokens_per_s`` (0: instant) makes the model write at
that rate, one token being four characters: a streamed reply comes in tokens at that
pace, a complete one after the time writing it all takes. ``in_flight`` / ``peak_in_flight`` show
concurrency. With ``api_key`` set, other keys get a 401 (whose message echoes
the key, as careless servers do, so redaction can be tested).

Servers that lack a capability are switched on per instance, as real ones answer:
``refuse_json_schema`` (a JSON-schema response refused as llama-cpp-python refuses it:
a 500 with pydantic's validation dump; a JSON object with a schema is taken),
``refuse_response_format`` (a 400 naming response_format, whatever its type),
``refuse_tools`` (a 400 naming tools), ``refuse_streaming`` (a 400 naming stream);
``html`` answers every request with a 200 HTML page (a wrong OPENAI_BASE_URL
pointing at a web site).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import math
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import replace
from types import TracebackType
from typing import Any

from aiohttp import web

from fake_servers.openai.replies import (
    Reply,
    as_reply,
    completion_body,
    error_body,
    stream_chunks,
)

ScriptResult = Reply | str | dict[str, Any] | list[Any]
Script = Callable[[dict[str, Any]], ScriptResult | Awaitable[ScriptResult]]

DEFAULT_REPLY = Reply.json(
    {"answer": "This is the fake model's answer.", "confidence": 0.9, "uncertainty_reason": None}
)
TOKEN_CHARS = 4
HANG_LIMIT = 60.0  # a hung request is released at the latest after this, or at stop()


class FakeOpenAIServer:
    """OpenAI's chat completions API on 127.0.0.1 (random port)."""

    def __init__(
        self, *, latency: float = 0.0, api_key: str | None = None, tokens_per_s: float = 0.0
    ) -> None:
        self.latency = latency
        self.tokens_per_s = tokens_per_s
        self.api_key = api_key
        self.refuse_json_schema = False
        self.refuse_response_format = False
        self.refuse_tools = False
        self.refuse_streaming = False
        self.html = False
        self.default: Reply = DEFAULT_REPLY
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self._queue: deque[Reply] = deque()
        self._script: Script | None = None
        self._ids = itertools.count(1)
        self._stopping = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._port = 0

    # --- lifecycle ---------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=1.0
        )
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self._port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAIServer:
        await self.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    # --- scripting -----------------------------------------------------------------

    def queue(self, *replies: ScriptResult) -> None:
        """Answer the next requests with these replies, in order."""
        self._queue.extend(as_reply(r) for r in replies)

    def script(self, fn: Script | None) -> None:
        """Answer with fn(request_json) once the queue is empty (None: back to default)."""
        self._script = fn

    @property
    def request_count(self) -> int:
        return len(self.requests)

    async def _next_reply(self, request: dict[str, Any]) -> Reply:
        if self._queue:
            return self._queue.popleft()
        if self._script is None:
            return self.default
        result = self._script(request)
        if inspect.isawaitable(result):
            result = await result
        return as_reply(result)

    # --- HTTP ----------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        if self.html:
            return _html_page()
        if (denied := self._check_key(request)) is not None:
            return denied
        model = {"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}
        return web.json_response({"object": "list", "data": [model]})

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.html:
                return _html_page()
            if (denied := self._check_key(request)) is not None:
                return denied
            if (refusal := self._refusal(body)) is not None:
                status = 500 if "validation error" in refusal else 400
                return web.json_response(
                    error_body(Reply.error(status, message=refusal)), status=status
                )
            reply = await self._next_reply(body)
            await asyncio.sleep(self.latency + reply.delay)
            return await self._answer(request, body, reply)
        finally:
            self.in_flight -= 1

    async def _answer(
        self, request: web.Request, body: dict[str, Any], reply: Reply
    ) -> web.StreamResponse:
        completion_id = f"chatcmpl-fake-{next(self._ids)}"
        if reply.kind == "hang":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), HANG_LIMIT)
            return web.json_response(error_body(Reply.error(503)), status=503)
        if reply.kind == "error":
            return web.json_response(
                error_body(reply), status=reply.status, headers=_retry_headers(reply)
            )
        if reply.kind == "broken_body":
            return web.Response(text="<html>bad gateway</html>", content_type="application/json")
        if body.get("stream"):
            return await self._stream(request, body, reply, completion_id)
        if reply.kind == "endless":  # not streamed: the model writes until the client gives up
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), HANG_LIMIT)
            return web.json_response(completion_body(body, reply, completion_id))
        if self.tokens_per_s > 0:
            await asyncio.sleep(len(tokens_of(reply.content)) / self.tokens_per_s)
        return web.json_response(completion_body(body, reply, completion_id))

    async def _stream(
        self, request: web.Request, body: dict[str, Any], reply: Reply, completion_id: str
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        paced = self.tokens_per_s > 0
        if paced and reply.chunks is None:
            reply = replace(reply, chunks=tuple(tokens_of(reply.content)))
        if reply.kind == "endless":
            await self._endless(response, body, reply, completion_id)
            return response
        chunks = stream_chunks(body, reply, completion_id)
        if reply.stall_after:  # no finish_reason, no usage: the end never comes
            chunks = [
                c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"] is None
            ]
        for chunk in chunks:
            if paced and _has_content(chunk):
                await asyncio.sleep(1 / self.tokens_per_s)
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        if reply.stall_after:  # the text so far, then nothing more until the client gives up
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), HANG_LIMIT)
            return response
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _endless(
        self, response: web.StreamResponse, body: dict[str, Any], reply: Reply, completion_id: str
    ) -> None:
        """`reply.content` over and over, a chunk every few milliseconds, until the client
        hangs up or the server stops (or `HANG_LIMIT` passes)."""
        piece = replace(reply, kind="text", chunks=(reply.content,))
        [opening, content, *_] = stream_chunks(body, piece, completion_id)
        deadline = asyncio.get_running_loop().time() + HANG_LIMIT
        with contextlib.suppress(ConnectionError):
            await response.write(f"data: {json.dumps(opening)}\n\n".encode())
            while not self._stopping.is_set() and asyncio.get_running_loop().time() < deadline:
                await response.write(f"data: {json.dumps(content)}\n\n".encode())
                await asyncio.sleep(0.005)

    def _refusal(self, body: dict[str, Any]) -> str | None:
        """The error message of a server without a capability the request uses."""
        wanted = body.get("response_format") or {}
        if self.refuse_response_format and wanted:
            return "response_format is not supported by this server"
        if self.refuse_json_schema and wanted.get("type") == "json_schema":
            return (
                "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
                "'input': 'json_schema'}\n\n  File \"app.py\", line 376, in create_chat_completion"
            )
        if self.refuse_tools and body.get("tools"):
            return "tools are not supported by this model"
        if self.refuse_streaming and body.get("stream"):
            return "stream=true is not supported"
        return None

    def _check_key(self, request: web.Request) -> web.Response | None:
        if self.api_key is None:
            return None
        sent = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if sent == self.api_key:
            return None
        message = f"Incorrect API key provided: {sent}."
        return web.json_response(error_body(Reply.error(401, message=message)), status=401)


def tokens_of(text: str) -> list[str]:
    """The fake model's tokens: four characters each."""
    return [text[i : i + TOKEN_CHARS] for i in range(0, len(text), TOKEN_CHARS)]


def _has_content(chunk: dict[str, Any]) -> bool:
    choices = chunk.get("choices") or [{}]
    return bool(choices[0].get("delta", {}).get("content"))


def _html_page() -> web.Response:
    return web.Response(
        text="<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>",
        content_type="text/html",
    )


def _retry_headers(reply: Reply) -> dict[str, str]:
    if reply.retry_after is None:
        return {}
    return {
        "Retry-After": str(math.ceil(reply.retry_after)),
        "retry-after-ms": str(int(reply.retry_after * 1000)),
    }
