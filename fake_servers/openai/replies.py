"""Reply specs for the fake OpenAI-compatible server, and their wire format.

A test says *what* the model should do (`Reply.text`, `Reply.json`,
`Reply.tool_call`, `Reply.error`, `Reply.hang`, `Reply.malformed`); this module
turns that into the JSON body or the SSE chunks the OpenAI API would send.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

ReplyKind = Literal["text", "tool_calls", "error", "hang", "broken_body", "endless"]


@dataclass(frozen=True)
class FakeToolCall:
    name: str
    arguments: str  # JSON text, as a model writes it
    id: str = ""


@dataclass(frozen=True)
class Reply:
    """What the fake model answers to one request; build it with the classmethods."""

    kind: ReplyKind
    content: str = ""
    tool_calls: tuple[FakeToolCall, ...] = ()
    status: int = 200
    retry_after: float | None = None
    message: str = ""
    delay: float = 0.0
    chunks: tuple[str, ...] | None = None
    usage: tuple[int, int] | None = None  # (prompt, completion); None -> estimated
    finish_reason: str | None = None
    stall_after: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def text(cls, content: str, *, delay: float = 0.0, chunks: list[str] | None = None) -> Reply:
        """Plain assistant text; streamed as `chunks` (or word by word) when asked to stream."""
        return cls("text", content=content, delay=delay, chunks=tuple(chunks) if chunks else None)

    @classmethod
    def json(cls, obj: Any, *, delay: float = 0.0) -> Reply:
        """Assistant text holding `obj` serialised as JSON."""
        return cls("text", content=json.dumps(obj), delay=delay)

    @classmethod
    def malformed(cls, content: str = '{"answer": ', *, delay: float = 0.0) -> Reply:
        """Assistant text that is truncated, invalid JSON."""
        return cls("text", content=content, delay=delay)

    @classmethod
    def tool_call(cls, name: str, arguments: dict[str, Any] | str, *, delay: float = 0.0) -> Reply:
        return cls.tool_calls_of((name, arguments), delay=delay)

    @classmethod
    def tool_calls_of(cls, *calls: tuple[str, dict[str, Any] | str], delay: float = 0.0) -> Reply:
        """One or more function calls (name, arguments) in a single assistant turn."""
        made = tuple(
            FakeToolCall(name, args if isinstance(args, str) else json.dumps(args), f"call_{i}")
            for i, (name, args) in enumerate(calls)
        )
        return cls("tool_calls", tool_calls=made, delay=delay)

    @classmethod
    def error(
        cls,
        status: int,
        *,
        retry_after: float | None = None,
        message: str | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """An error status with OpenAI's error body; 429 may carry Retry-After."""
        return cls(
            "error",
            status=status,
            retry_after=retry_after,
            message=message or f"fake server error {status}",
            delay=delay,
        )

    @classmethod
    def hang(cls) -> Reply:
        """Never answer (until the server stops): for client timeouts."""
        return cls("hang")

    @classmethod
    def endless(cls, piece: str = "and so on ") -> Reply:
        """A stream that never ends: `piece` again and again (a model in a loop)."""
        return cls("endless", content=piece)

    @classmethod
    def stalled(cls, content: str, *, chunks: list[str] | None = None) -> Reply:
        """Stream `content`, then send nothing more and never finish (a server that stalls
        mid-answer); a complete (non-streamed) request gets the text, as a slow server would."""
        return cls(
            "text", content=content, chunks=tuple(chunks) if chunks else None, stall_after=True
        )

    @classmethod
    def broken_body(cls) -> Reply:
        """HTTP 200 whose body is not JSON at all."""
        return cls("broken_body")


def as_reply(value: Reply | str | dict[str, Any] | list[Any]) -> Reply:
    """Scripts may return a Reply, a text, or a JSON-able dict/list."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    return Reply.json(value)


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def usage_for(request: dict[str, Any], reply: Reply) -> dict[str, int]:
    if reply.usage is not None:
        prompt, completion = reply.usage
    else:
        prompt_text = "".join(str(m.get("content") or "") for m in request.get("messages", []))
        prompt = _estimate_tokens(prompt_text)
        completion = _estimate_tokens(
            reply.content + "".join(c.arguments for c in reply.tool_calls)
        )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _tool_calls_json(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in reply.tool_calls
    ]


def _finish_reason(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def completion_body(request: dict[str, Any], reply: Reply, completion_id: str) -> dict[str, Any]:
    """A non-streaming chat.completion object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls_json(reply)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "fake-model"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _finish_reason(reply),
                "logprobs": None,
            }
        ],
        "usage": usage_for(request, reply),
    }


def stream_chunks(
    request: dict[str, Any], reply: Reply, completion_id: str
) -> list[dict[str, Any]]:
    """The chat.completion.chunk objects of a streamed answer, in order."""
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": request.get("model", "fake-model"),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    pieces = reply.chunks or tuple(_words(reply.content))
    chunks += [chunk({"content": piece}) for piece in pieces]
    for index, call in enumerate(_tool_calls_json(reply)):
        chunks.append(chunk({"tool_calls": [{"index": index, **call}]}))
    chunks.append(chunk({}, _finish_reason(reply)))
    if (request.get("stream_options") or {}).get("include_usage"):
        chunks.append({**base, "choices": [], "usage": usage_for(request, reply)})
    return chunks


def _words(text: str) -> list[str]:
    """Split keeping the spaces, so the chunks join back to the text."""
    words: list[str] = []
    for i, word in enumerate(text.split(" ")):
        words.append(word if i == 0 else " " + word)
    return [w for w in words if w]


def error_body(reply: Reply) -> dict[str, Any]:
    kind = {401: "invalid_request_error", 429: "rate_limit_error"}.get(
        reply.status, "server_error"
    )
    return {"error": {"message": reply.message, "type": kind, "param": None, "code": None}}
