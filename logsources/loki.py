"""Grafana Loki over its HTTP API: `GET /loki/api/v1/query_range` with a LogQL selector.

The pattern goes into the query as a line filter (``{app="web"} |~ "(?i)pattern"``), so
Loki does the filtering; `direction=backward` and `limit` give the newest lines first,
bounded. Times travel as Unix nanoseconds. Credentials: a bearer token, or basic auth,
and the tenant header when set. A 429, a 5xx, a timeout or a body that is not Loki's:
a ``LogRead(error=...)``; a 429 or 5xx is tried once more after a short pause.

Loki cannot run on the machines whytree is developed on: the client is tested against a
fake server over real HTTP that answers as Loki's documented API does (docs/logs.md).
"""

from __future__ import annotations

import base64
import json
import logging
from datetime import UTC, datetime
from typing import Any

import aiohttp
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_fixed,
)

from logsources.config import LokiStream
from reasoning_core import LogLine, LogQuery, LogRead

log = logging.getLogger(__name__)

QUERY_PATH = "/loki/api/v1/query_range"


class _Retryable(Exception):
    """A 429 or 5xx: worth one more try."""


def logql(selector: str, pattern: str | None) -> str:
    """The selector with the pattern as a case-insensitive regex line filter."""
    if not pattern:
        return selector
    quoted = json.dumps("(?i)" + pattern)  # a Go string literal: quotes and backslashes escaped
    return f"{selector} |~ {quoted}"


class LokiSource:
    """One named source: a Loki stream selector."""

    def __init__(self, name: str, stream: LokiStream) -> None:
        self.name = name
        self.stream = stream

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.stream.token is not None:
            headers["Authorization"] = f"Bearer {self.stream.token.get_secret_value()}"
        elif self.stream.username is not None:
            password = self.stream.password.get_secret_value() if self.stream.password else ""
            pair = f"{self.stream.username}:{password}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        if self.stream.tenant:
            headers["X-Scope-OrgID"] = self.stream.tenant
        return headers

    async def read(self, query: LogQuery) -> LogRead:
        params = {
            "query": logql(self.stream.selector, query.pattern),
            "start": str(_ns(query.start)),
            "end": str(_ns(query.end)),
            "limit": str(query.max_lines),
            "direction": "backward",
        }
        url = str(self.stream.url).rstrip("/") + QUERY_PATH
        timeout = aiohttp.ClientTimeout(total=query.timeout_sec)
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(2),
                wait=wait_fixed(0.5),
                retry=retry_if_exception_type(_Retryable),
                reraise=True,
            ):
                with attempt:
                    body = await self._get(url, params, timeout, query.max_bytes)
        except _Retryable as e:
            log.warning("log source %s: Loki answered %s", self.name, e)
            return LogRead(source=self.name, error=f"logs unavailable: Loki answered {e}")
        except TimeoutError:
            log.warning("log source %s: Loki took over %.1f s", self.name, query.timeout_sec)
            return LogRead(
                source=self.name,
                error=f"logs unavailable: Loki took over {query.timeout_sec:g} s",
            )
        except (aiohttp.ClientError, ValueError) as e:
            log.warning("log source %s: Loki: %s", self.name, e)
            return LogRead(source=self.name, error=f"logs unavailable: Loki: {str(e)[:200]}")
        return self._lines(body, query)

    async def _get(
        self, url: str, params: dict[str, str], limits: aiohttp.ClientTimeout, max_bytes: int
    ) -> Any:
        async with (
            aiohttp.ClientSession(timeout=limits) as http,
            http.get(url, params=params, headers=self._headers()) as response,
        ):
            raw = await response.content.read(max_bytes + 1)
            if response.status == 429 or response.status >= 500:  # noqa: PLR2004
                raise _Retryable(f"HTTP {response.status}: {_said(raw)}")
            if response.status != 200:  # noqa: PLR2004
                raise ValueError(f"HTTP {response.status}: {_said(raw)}")
            if len(raw) > max_bytes:
                raise ValueError(f"the answer is over {max_bytes} bytes; narrow the selector")
            return json.loads(raw)

    def _lines(self, body: Any, query: LogQuery) -> LogRead:
        try:
            if body.get("status") != "success":
                return LogRead(source=self.name, error=f"logs unavailable: Loki: {_said(body)}")
            data = body["data"]
            if data.get("resultType") != "streams":
                return LogRead(source=self.name, error="logs unavailable: Loki sent no streams")
            lines = [
                LogLine(
                    time=datetime.fromtimestamp(int(stamp) / 1e9, UTC),
                    text=str(text),
                    source=self.name,
                    origin=_labels(stream.get("stream", {})),
                )
                for stream in data["result"]
                for stamp, text, *_ in stream["values"]
            ]
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            return LogRead(source=self.name, error=f"logs unavailable: not Loki's answer ({e})")
        lines.sort(key=lambda line: line.time, reverse=True)
        truncated = len(lines) >= query.max_lines
        return LogRead(
            source=self.name,
            lines=lines[: query.max_lines],
            truncated=truncated,
            note=f"Loki's limit of {query.max_lines} lines reached" if truncated else None,
        )


def _ns(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000) * 1000


def _labels(stream: dict[str, Any]) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(stream.items())) + "}"


def _said(raw: Any) -> str:
    """What an error body says, short."""
    if isinstance(raw, bytes):
        text = raw[:300].decode("utf-8", "replace")
        try:
            parsed = json.loads(raw)
        except ValueError:
            return text.strip() or "no body"
        raw = parsed
    if isinstance(raw, dict):
        return str(raw.get("error") or raw.get("message") or raw)[:200]
    return str(raw)[:200]
