"""ApiRoutes: ``/v1/ask``, ``/v1/jobs/{id}``, ``/v1/jobs/{id}/events`` (SSE), ``/v1/openapi.json``.

``POST /v1/ask`` with ``"mode": "sync"`` answers with the `Answer`; with
``"mode": "async"`` it answers 202 with a job id as soon as the strategy is chosen
— except a clarifying question or a refusal, which come back at once (200), never
as a job. Every call but the OpenAPI description needs an API key (bot/http_api/gate.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ValidationError

from bot.http_api.gate import ApiGate
from bot.http_api.jobs import JobBoard
from bot.http_api.models import AskRequest, JobAccepted, JobView
from bot.http_api.openapi import openapi_document
from bot.operations.billing import usage_owner
from reasoning_core import (
    Answer,
    AnswerEvent,
    ApiJob,
    ApiJobStore,
    ApiKey,
    Event,
    Question,
    ReasoningService,
    StoreError,
    StrategySelectedEvent,
    clean_text,
)

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024
#: Seconds of silence on an event stream before a keep-alive comment line.
KEEPALIVE_SEC = 15.0
#: API conversations get chat ids no Telegram chat has: base + key id * 2^31 + chat.
API_CHAT_BASE = 8 * 10**18
_JOB_STRATEGIES = frozenset({"deep", "quick"})


class ApiRoutes:
    def __init__(
        self, *, service: ReasoningService, gate: ApiGate, jobs: ApiJobStore, board: JobBoard
    ) -> None:
        self._service = service
        self._gate = gate
        self._jobs = jobs
        self._board = board

    def install(self, app: web.Application) -> None:
        """Add the API's routes to `app` (whichever server it belongs to)."""
        app.router.add_post("/v1/ask", self.ask)
        app.router.add_get("/v1/jobs/{job_id}", self.job)
        app.router.add_get("/v1/jobs/{job_id}/events", self.events)
        app.router.add_get("/v1/openapi.json", self.openapi)

    async def openapi(self, request: web.Request) -> web.Response:
        return web.json_response(openapi_document())

    async def ask(self, request: web.Request) -> web.StreamResponse:
        if self._board.stopping:  # another replica answers it
            return _error(503, "this server is stopping, try again", headers={"Retry-After": "1"})
        try:
            return await self._ask(request)
        except StoreError as e:
            log.error("API question failed on the database: %s", e)
            return _error(503, "storage unavailable, try again later")

    async def _ask(self, request: web.Request) -> web.StreamResponse:
        key = await self._gate.key(request.headers.get("Authorization"))
        if key is None:
            return _error(401, "unauthorized: send Authorization: Bearer <API key>")
        body = await request.content.read(MAX_BODY_BYTES + 1)
        if len(body) > MAX_BODY_BYTES:
            return _error(400, f"body larger than {MAX_BODY_BYTES} bytes")
        try:
            ask = AskRequest.model_validate_json(body)
        except ValidationError as e:
            return _error(400, _first_problem(e))
        refusal = await self._gate.admit(key, language=ask.language or "en")
        if refusal is not None:
            headers = {"Retry-After": str(refusal.retry_after)} if refusal.retry_after else None
            return _error(refusal.status, refusal.reason, headers=headers)
        question = Question(
            text=clean_text(ask.question).strip(),
            user_id=key.user_id,
            chat_id=API_CHAT_BASE + key.id * 2**31 + (ask.chat or 0),
            project=ask.project,
        )
        log.info(
            "API question",
            extra={"user_id": key.user_id, "api_key": key.name, "api_user": ask.user},
        )
        with usage_owner(key.user_id):
            if ask.mode == "sync":
                return _json(await self._service.answer(question))
            return await self._ask_async(request, key, question)

    async def _ask_async(
        self, request: web.Request, key: ApiKey, question: Question
    ) -> web.Response:
        events = self._service.ask(question)
        seen: list[Event] = []
        async for event in events:
            seen.append(event)
            if isinstance(event, AnswerEvent):  # decided and answered at once (clarify, decline)
                await events.aclose()  # type: ignore[attr-defined]
                return _json(event.answer)
            if (
                isinstance(event, StrategySelectedEvent)
                and event.decision.strategy in _JOB_STRATEGIES
            ):
                break
        job_id = secrets.token_urlsafe(12)
        await self._board.start(
            job_id, key_id=key.id, question=question.text, seen=seen, rest=events
        )
        accepted = JobAccepted(
            job_id=job_id,
            status_url=f"/v1/jobs/{job_id}",
            events_url=f"/v1/jobs/{job_id}/events",
        )
        return _json(accepted, status=202)

    async def job(self, request: web.Request) -> web.Response:
        job = await self._own_job(request)
        if isinstance(job, web.Response):
            return job
        view = JobView(job_id=job.id, status=job.status, progress=job.progress, answer=job.answer)
        return _json(view)

    async def events(self, request: web.Request) -> web.StreamResponse:
        job = await self._own_job(request)
        if isinstance(job, web.Response):
            return job
        job_id = job.id
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        try:
            await stream_events(response, self._board.follow(job_id))
        except (ConnectionResetError, StoreError) as e:  # the client left: the job goes on
            log.info("SSE follower of API job %s left: %s", job_id, type(e).__name__)
        return response

    async def _own_job(self, request: web.Request) -> ApiJob | web.Response:
        """The caller's job, or the refusal: 401 without a key, 403 for a refused user,
        404 for an unknown job or another key's, 503 when the database is down."""
        try:
            key = await self._gate.key(request.headers.get("Authorization"))
            if key is None:
                return _error(401, "unauthorized: send Authorization: Bearer <API key>")
            refusal = await self._gate.admit(key, ask=False)
            if refusal is not None:
                return _error(refusal.status, refusal.reason)
            job = await self._jobs.get(request.match_info["job_id"])
        except StoreError as e:
            log.error("reading an API job failed: %s", e)
            return _error(503, "storage unavailable, try again later")
        if job is None or job.key_id != key.id:
            return _error(404, "no such job")
        return job


async def stream_events(
    response: web.StreamResponse,
    events: AsyncIterator[tuple[str, Any]],
    *,
    keepalive_sec: float = KEEPALIVE_SEC,
) -> None:
    """Write the events as Server-Sent Events; a comment line every `keepalive_sec` of
    silence keeps proxies from closing a stream while a long analysis works."""
    queue: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()

    async def pump() -> None:
        try:
            async with aclosing(events) as items:  # type: ignore[type-var]
                async for item in items:
                    await queue.put(item)
        finally:
            queue.put_nowait(None)  # the end, even when following failed

    task = asyncio.create_task(pump())
    try:
        number = 0
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), keepalive_sec)
            except TimeoutError:
                await response.write(b": keepalive\n\n")
                continue
            if item is None:
                break
            number += 1
            name, data = item
            payload = json.dumps(data, ensure_ascii=False)
            await response.write(f"id: {number}\nevent: {name}\ndata: {payload}\n\n".encode())
        await task  # its errors (a store failure while following) reach the caller
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _json(model: BaseModel | Answer, *, status: int = 200) -> web.Response:
    return web.Response(
        text=model.model_dump_json(), status=status, content_type="application/json"
    )


def _error(status: int, reason: str, *, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": reason}, status=status, headers=headers)


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "body"
    return f"{where}: {first['msg']}"
