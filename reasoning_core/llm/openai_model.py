"""OpenAIChatModel: the `ChatModel` port over any OpenAI-compatible server.

With ``openai_errors`` (what a server's error says), the only code that imports
`openai` (OpenAI, vLLM, Ollama, llama.cpp, ... via `base_url`). The SDK's own retries
are off; tenacity retries here instead, so the policy is ours and visible:

- retried: 429, 5xx and connection failures, with exponential backoff and
  jitter, or the server's Retry-After (``retry-after-ms`` / ``retry-after``)
  when it sends one, capped at `max_retry_wait`;
- never retried: timeouts (a hung server would only hang again) and other 4xx;
- bounded: at most ``max_retries + 1`` attempts, each within `timeout`, and no
  new attempt or wait that would end later than ``2 * timeout`` after the
  start. So one `complete()` takes at most about twice the timeout, whatever
  the server does; a Retry-After longer than what is left ends the retries.

Servers differ in what they support. Structured answers are asked for in the
best dialect the server takes: ``response_format: {"type": "json_schema"}``
(OpenAI, vLLM, Ollama), else ``{"type": "json_object", "schema": ...}`` (llama.cpp's
server and llama-cpp-python's turn the schema into a grammar), else JSON asked for
in the prompt alone, validated and repaired by `complete_json`. A request error
that names ``response_format``, ``tools`` or ``stream`` (a 400 or 422, or the 500
with a validation error that llama-cpp-python sends) means this server refuses
that: the refusal is remembered (one log line), and that call and every later one
go the next way down — the next dialect, no tools, complete replies. `probe` tells
`whytree doctor` what the server honours (answers, which dialect, tool calls,
streaming).

SDK errors are translated once, here, into `LLMHTTPError(status=...)`,
`LLMTimeoutError` and `LLMResponseError`. The API key never appears in logs or
messages: server messages are redacted, including the chained SDK exception.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import openai
from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletion, ChatCompletionMessageFunctionToolCall
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential_jitter,
)

from reasoning_core.errors import (
    LLMError,
    LLMHTTPError,
    LLMNotConfiguredError,
    LLMResponseError,
    LLMTimeoutError,
)
from reasoning_core.llm.openai_errors import (
    OPTIONAL_FEATURES,
    describe,
    readable,
    refused_feature,
    retry_after,
    retryable,
    server_message,
)
from reasoning_core.models import Usage
from reasoning_core.ports import ChatMessage, Completion, TextSink, ToolCall, ToolSpec

log = logging.getLogger(__name__)

R = TypeVar("R")

#: Used when only a base URL is configured (local servers that ignore keys).
_PLACEHOLDER_KEY = "no-key"
_DEFAULT_BASE_URL = "https://api.openai.com/v1"
_BUDGET_FACTOR = 2.0
#: How doctor names the dialects.
JSON_SCHEMA = "json_schema"
JSON_OBJECT_WITH_SCHEMA = "json_object with schema"
PLAIN_JSON = "plain JSON in the prompt"
_PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "probe",
        "description": "Say whether you can call tools.",
        "parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}


#: `_try`'s answer when the server refused an optional feature and the refusal is learnt.
_LEARNT = "refused"


class _NotJsonError(ValueError):
    """The server answered 200 with something that is not JSON (an HTML page, usually)."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the server honoured in `OpenAIChatModel.probe`; a problem is None when it did.

    `structured` is the dialect of structured output the server takes (`JSON_SCHEMA`,
    `JSON_OBJECT_WITH_SCHEMA` or `PLAIN_JSON`), `refused` the better ones it refused, and
    `structured_problem` a failure that is not a refusal (a timeout, say).
    """

    answer: str | None
    structured: str
    refused: tuple[str, ...]
    structured_problem: str | None
    tools: str | None
    streaming: str | None


class OpenAIChatModel:
    """A `ChatModel` backed by an OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        model: str,
        timeout: float,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_retry_wait: float = 20.0,
    ) -> None:
        if not base_url and not api_key:
            raise LLMNotConfiguredError("set OPENAI_API_KEY and/or OPENAI_BASE_URL")
        self._api_key = api_key or ""
        self._model = model
        self._timeout = timeout
        self._max_retries = max_retries
        self._max_retry_wait = max_retry_wait
        self._backoff = wait_exponential_jitter(
            multiplier=backoff, max=max_retry_wait, jitter=backoff
        )
        # Explicit values, so the SDK never falls back to environment variables.
        self._client = AsyncOpenAI(
            base_url=base_url or _DEFAULT_BASE_URL,
            api_key=api_key or _PLACEHOLDER_KEY,
            timeout=timeout,
            max_retries=0,
        )
        self._refused: set[str] = set()

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> Completion:
        """One chat completion, retried per the module policy."""
        request: dict[str, Any] = {
            "model": self._model,
            "messages": [_message_param(m) for m in messages],
        }
        if (wanted := _response_format(json_mode, schema)) is not None:
            request["response_format"] = wanted
        if tools:
            request["tools"] = [_tool_param(t) for t in tools]
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        response = await self._guarded(self._send(request))
        return _completion(response)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        on_text: TextSink,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One completion whose text goes to `on_text` as it arrives (the text so far).

        Retried like `complete` (a retry starts the text again). A server that refuses
        to stream is remembered, and from then on gives its complete reply at once.
        """
        if "stream" in self._refused:
            return await self._whole(messages, on_text, json_mode, schema, max_tokens)
        request: dict[str, Any] = {
            "model": self._model,
            "messages": [_message_param(m) for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if (wanted := _response_format(json_mode, schema)) is not None:
            request["response_format"] = wanted
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        self._without_refused(request)

        async def call() -> Completion:
            return await self._read_stream(request, on_text)

        try:
            return await self._guarded(self._with_retries(call))
        except LLMHTTPError as e:
            bad = e.__cause__
            if not isinstance(bad, openai.APIStatusError):
                raise
            if not self._learn_refusal(bad, request):
                raise
            return await self.stream(
                messages,
                on_text=on_text,
                json_mode=json_mode,
                schema=schema,
                max_tokens=max_tokens,
            )

    async def _whole(
        self,
        messages: Sequence[ChatMessage],
        on_text: TextSink,
        json_mode: bool,
        schema: dict[str, Any] | None,
        max_tokens: int | None,
    ) -> Completion:
        completion = await self.complete(
            messages, json_mode=json_mode, schema=schema, max_tokens=max_tokens
        )
        await on_text(completion.text)
        return completion

    async def _read_stream(self, request: dict[str, Any], on_text: TextSink) -> Completion:
        """The chunks of a streamed completion, read as plain dicts.

        The request is sent as built (`_message_param` already gives the API's shape) with
        the client's documented `post`, and the chunks are not turned into SDK models:
        both would cost more CPU per call than the rest of a quick answer's bookkeeping.
        """
        chunks = await self._client.post(
            "/chat/completions",
            body=request,
            cast_to=dict,
            stream=True,
            stream_cls=AsyncStream[dict[str, Any]],
        )
        text = ""
        usage = Usage(llm_calls=1)
        finish: str | None = None
        seen = 0
        async for chunk in chunks:
            seen += 1
            if not isinstance(chunk, dict):
                raise _NotJsonError
            if isinstance(counted := chunk.get("usage"), dict):
                usage = Usage(
                    prompt_tokens=int(counted.get("prompt_tokens") or 0),
                    completion_tokens=int(counted.get("completion_tokens") or 0),
                    llm_calls=1,
                )
            choices = chunk.get("choices")
            if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
                continue
            finish = choices[0].get("finish_reason") or finish
            delta = choices[0].get("delta")
            piece = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(piece, str) and piece:
                text += piece
                await on_text(text)
        if not seen:  # not a stream of events: a web page, or nothing at all
            if "html" in chunks.response.headers.get("content-type", ""):
                raise _NotJsonError
            raise ValueError("an empty stream")
        return Completion(text=text, usage=usage, finish_reason=finish)

    def _learn_refusal(self, error: openai.APIStatusError, request: dict[str, Any]) -> bool:
        """Remember an optional feature the server refused (True), so the request is sent
        again without it (the next dialect down, for structured output), now and from then
        on; False when the error is about something else."""
        feature = refused_feature(error, request)
        if feature is None:
            return False
        self._refused.add(feature)
        log.warning(
            "the LLM server refuses %s (%s): using %s from now on",
            feature,
            self._redact(readable(server_message(error))),
            OPTIONAL_FEATURES[feature][1],
        )
        self._without_refused(request)
        return True

    def _without_refused(self, request: dict[str, Any]) -> None:
        """`request` as this server takes it: a refused JSON schema becomes a JSON object
        with the schema, a refused JSON object plain JSON asked for in the prompt; refused
        tools go."""
        wanted = request.get("response_format")
        if isinstance(wanted, dict):
            if wanted.get("type") == "json_schema" and "json_schema" in self._refused:
                wanted = {"type": "json_object", "schema": wanted["json_schema"]["schema"]}
            if wanted.get("type") == "json_object" and "json_object" in self._refused:
                request.pop("response_format")
            else:
                request["response_format"] = wanted
        if "tools" in self._refused:
            request.pop("tools", None)

    @property
    def structured_output(self) -> str:
        """The dialect of structured output used with this server, as far as it has learnt."""
        if "json_schema" not in self._refused:
            return JSON_SCHEMA
        if "json_object" not in self._refused:
            return JSON_OBJECT_WITH_SCHEMA
        return PLAIN_JSON

    async def _send(self, request: dict[str, Any]) -> ChatCompletion:
        """One completion, retried; without the fields this server has refused."""
        self._without_refused(request)

        async def call() -> ChatCompletion:
            response = await self._client.chat.completions.create(**request)
            if not isinstance(response, ChatCompletion):  # the SDK returns the text of non-JSON
                raise _NotJsonError
            return response

        try:
            return await self._with_retries(call)
        except openai.APIStatusError as e:
            if not self._learn_refusal(e, request):
                raise
            return await self._send(request)

    async def ping(self) -> float:
        """Seconds one cheap request (list models) takes; raises `LLMError` on failure."""
        started = time.perf_counter()
        await self._guarded(self._attempt(self._client.models.list, self._timeout))
        return time.perf_counter() - started

    async def probe(self) -> Capabilities:
        """One tiny call each: a plain answer, a structured answer in each dialect until
        one is taken, a tool call, a stream.

        Each is bounded by the timeout and not retried; a problem is a short sentence.
        Refusals are learnt as in real calls.
        """
        base = self._probe_request()
        answer = await self._try(base)
        if answer is not None:  # the server does not answer at all: nothing more to learn
            return Capabilities(answer, PLAIN_JSON, (), answer, answer, answer)
        structured_problem = await self._probe_structured(base)
        refused = tuple(f for f in ("json_schema", "json_object") if f in self._refused)
        return Capabilities(
            answer=None,
            structured=self.structured_output,
            refused=refused,
            structured_problem=structured_problem,
            tools=await self._try({**base, "tools": [_PROBE_TOOL]}),
            streaming=await self._try({**base, "stream": True}),
        )

    async def _probe_structured(self, base: dict[str, Any]) -> str | None:
        """Try the dialects best first until the server takes one; a non-refusal problem."""
        while self.structured_output != PLAIN_JSON:
            request = {**base, "response_format": _response_format(True, _PROBE_SCHEMA)}
            self._without_refused(request)
            problem = await self._try(request, learn=True)
            if problem != _LEARNT:
                return problem
        return None

    async def problem(self) -> str | None:
        """Why the server does not answer one tiny call (None when it does); no retries."""
        return await self._try(self._probe_request())

    def _probe_request(self) -> dict[str, Any]:
        messages = [{"role": "user", "content": 'Reply with the JSON object {"ok": true}.'}]
        return {"model": self._model, "messages": messages, "max_tokens": 16}

    async def _try(self, request: dict[str, Any], *, learn: bool = False) -> str | None:
        """None when the server takes `request`, else a short reason (`_LEARNT` when
        `learn` and the server refused an optional feature, now remembered)."""

        async def call() -> None:
            response = await self._client.chat.completions.create(**request)
            if request.get("stream"):
                async for _ in cast(Any, response):
                    pass
            elif not isinstance(response, ChatCompletion):
                raise _NotJsonError

        try:
            await self._guarded(self._attempt(call, self._timeout))
        except LLMError as e:
            cause = e.__cause__
            refusal = learn and isinstance(cause, openai.APIStatusError)
            if refusal and self._learn_refusal(cast(openai.APIStatusError, cause), request):
                return _LEARNT
            return str(e)
        return None

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.close()

    # --- retries -------------------------------------------------------------------

    async def _with_retries(self, call: Callable[[], Awaitable[R]]) -> R:
        budget = self._timeout * _BUDGET_FACTOR
        deadline = asyncio.get_running_loop().time() + budget
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self._max_retries + 1) | stop_before_delay(budget),
            wait=self._wait,
            retry=retry_if_exception(retryable),
            before_sleep=self._log_retry,
            reraise=True,
        )

        async def attempt() -> R:
            remaining = deadline - asyncio.get_running_loop().time()
            return await self._attempt(call, min(self._timeout, max(remaining, 0.01)))

        return await retrying(attempt)

    @staticmethod
    async def _attempt(call: Callable[[], Awaitable[R]], seconds: float) -> R:
        async with asyncio.timeout(seconds):
            return await call()

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        hinted = retry_after(error)
        if hinted is not None:
            return min(hinted, self._max_retry_wait)
        return self._backoff(state)

    def _log_retry(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        sleep = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "LLM request failed (%s); retry %d of %d in %.2fs",
            describe(error),
            state.attempt_number,
            self._max_retries,
            sleep,
        )

    # --- error translation -------------------------------------------------------------

    async def _guarded(self, work: Awaitable[R]) -> R:
        try:
            return await work
        except (openai.OpenAIError, TimeoutError, ValueError) as e:
            self._scrub(e)
            raise self._translate(e) from e

    def _translate(self, error: BaseException) -> LLMError:
        if isinstance(error, openai.APITimeoutError | TimeoutError):
            return LLMTimeoutError(f"the LLM did not answer within {self._timeout:g}s")
        if isinstance(error, openai.APIStatusError):
            detail = self._redact(readable(server_message(error)))
            return LLMHTTPError(
                f"the LLM server answered HTTP {error.status_code}: {detail}",
                status=error.status_code,
            )
        if isinstance(error, openai.APIConnectionError):
            return LLMHTTPError("could not connect to the LLM server", status=None)
        if isinstance(error, _NotJsonError):
            return LLMResponseError(
                "the LLM server answered with a web page, not JSON: check OPENAI_BASE_URL "
                "(an OpenAI-compatible API usually ends in /v1)"
            )
        if isinstance(error, openai.APIResponseValidationError | ValueError):
            return LLMResponseError("the LLM server sent a malformed response")
        log.warning("unexpected LLM client failure: %s", describe(error))
        return LLMError("the LLM request failed unexpectedly")

    def _redact(self, text: str) -> str:
        if len(self._api_key) >= 4:  # noqa: PLR2004 - shorter "keys" are not secrets
            return text.replace(self._api_key, "***")
        return text

    def _scrub(self, error: BaseException) -> None:
        """Redact the key from the SDK exception we chain (tracebacks print it)."""
        error.args = tuple(self._redact(a) if isinstance(a, str) else a for a in error.args)
        if isinstance(error, openai.APIError):
            error.message = self._redact(error.message)


def _response_format(json_mode: bool, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The best dialect's ``response_format`` (`_without_refused` steps it down)."""
    if schema is not None:
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    return {"type": "json_object"} if json_mode else None


def _message_param(message: ChatMessage) -> dict[str, Any]:
    param: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        param["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        param["tool_call_id"] = message.tool_call_id
    return param


def _tool_param(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def _completion(response: ChatCompletion) -> Completion:
    if not response.choices:
        raise LLMResponseError("the LLM returned no choices")
    choice = response.choices[0]
    calls = [
        ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments)
        for c in choice.message.tool_calls or []
        if isinstance(c, ChatCompletionMessageFunctionToolCall)
    ]
    usage = response.usage
    return Completion(
        text=choice.message.content or "",
        tool_calls=calls,
        usage=Usage(
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            llm_calls=1,
        ),
        finish_reason=cast(str | None, choice.finish_reason),
    )
