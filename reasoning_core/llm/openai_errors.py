"""What an OpenAI-compatible server's error says: whether to try again, how long to wait,
which optional feature of the request it refuses, and one readable line of it.

Servers word their errors differently: a refusal is a 400 or 422, or the 500 with a
validation error that llama-cpp-python sends; the wait hint is ``retry-after-ms`` or
``retry-after`` (seconds or an HTTP date). `OpenAIChatModel` reads its errors here.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import openai

_REQUEST_ERRORS = (400, 422)
_SERVER_ERROR = 500
_MAX_DETAIL = 160
_VALIDATION_MSG_RE = re.compile(r"""['"]msg['"]:\s*(['"])(.+?)\1""")
#: An optional feature a server may refuse, the words its refusal uses for it, what we
#: do instead. The first two are the dialects of structured output, best first.
OPTIONAL_FEATURES: dict[str, tuple[tuple[str, ...], str]] = {
    "json_schema": (("response_format", "json_schema"), "JSON objects with the schema"),
    "json_object": (("response_format", "json_object"), "plain JSON asked for in the prompt"),
    "tools": (("tool",), "no tools"),
    "stream": (("stream",), "complete replies"),
}


def _features_of(request: dict[str, Any]) -> list[str]:
    wanted = request.get("response_format")
    found = [wanted.get("type", "")] if isinstance(wanted, dict) else []
    found += [name for name in ("tools", "stream") if request.get(name)]
    return [f for f in found if f in OPTIONAL_FEATURES]


def _is_request_error(error: openai.APIStatusError) -> bool:
    """A 400/422, or the 500 llama-cpp-python answers a request that fails its validation."""
    if error.status_code in _REQUEST_ERRORS:
        return True
    return (
        error.status_code == _SERVER_ERROR and "validation error" in server_message(error).lower()
    )


def refused_feature(error: openai.APIStatusError, request: dict[str, Any]) -> str | None:
    """The optional feature of `request` a request error names, if it names one."""
    if not _is_request_error(error):
        return None
    text = server_message(error).lower()
    for feature in _features_of(request):
        if any(word in text for word in OPTIONAL_FEATURES[feature][0]):
            return feature
    return None


def readable(message: str) -> str:
    """One short line of a server's error message: the first validation message of a
    pydantic dump (llama-cpp-python sends those), else the first line."""
    if (found := _VALIDATION_MSG_RE.search(message)) is not None:
        message = f"invalid request: {found.group(2)}"
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return first if len(first) <= _MAX_DETAIL else first[: _MAX_DETAIL - 1] + "…"


def retryable(error: BaseException) -> bool:
    if isinstance(error, openai.APITimeoutError):
        return False
    if isinstance(error, openai.APIStatusError):
        if _is_request_error(error):
            return False
        return error.status_code == 429 or error.status_code >= 500  # noqa: PLR2004
    return isinstance(error, openai.APIConnectionError)


def retry_after(error: BaseException | None) -> float | None:
    """The server's wait hint in seconds, if it sent a usable one."""
    if not isinstance(error, openai.APIStatusError):
        return None
    headers = error.response.headers
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        if (value := headers.get("retry-after")) is None:
            return None
        if value.replace(".", "", 1).isdigit():
            return float(value)
        when = parsedate_to_datetime(value)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    except (ValueError, TypeError):
        return None


def server_message(error: openai.APIStatusError) -> str:
    """The server's own words (the "error.message" field), else the SDK's summary."""
    body = error.body
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) and message else error.message


def describe(error: BaseException | None) -> str:
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}"
    return type(error).__name__
