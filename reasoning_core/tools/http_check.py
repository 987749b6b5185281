"""The `http_check` tool: GET/HEAD probes to allow-listed hosts only.

The allow-list (TOOLS_HTTP_ALLOW) holds exact host names (`api.example.com`,
`127.0.0.1`) and domain suffixes (`.example.internal`, which matches the domain
itself and every host under it). A URL whose host is not listed is refused
before any connection is made. Redirects are never followed: a 3xx is reported
with its Location, so a listed host cannot bounce the probe elsewhere.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from urllib.parse import urlsplit

import aiohttp

from reasoning_core.tools.base import ToolErrorKind, ToolRequest, ToolResult

_OK_STATUS = range(200, 400)


class HostAllowList:
    """Exact hosts and `.suffix` domains a probe may reach."""

    def __init__(self, entries: Iterable[str]) -> None:
        self._exact: set[str] = set()
        self._suffixes: list[str] = []
        for raw in entries:
            entry = raw.strip().lower().rstrip(".")
            if entry.startswith("*."):
                entry = entry[1:]
            if not entry:
                continue
            if entry.startswith("."):
                self._suffixes.append(entry)
            else:
                self._exact.add(entry)

    @classmethod
    def parse(cls, text: str) -> HostAllowList:
        """From the comma- or space-separated TOOLS_HTTP_ALLOW value."""
        return cls(text.replace(",", " ").split())

    def allows(self, host: str) -> bool:
        """True for a listed host or a host under a listed suffix."""
        host = host.strip().lower().rstrip(".")
        if not host:
            return False
        if host in self._exact:
            return True
        return any(host.endswith(s) or host == s[1:] for s in self._suffixes)

    def __bool__(self) -> bool:
        return bool(self._exact or self._suffixes)


class HttpCheckTool:
    """Status and latency of one HTTP request; implements the `Tool` port."""

    name = "http_check"

    def __init__(self, allow: HostAllowList | Iterable[str], *, timeout_sec: float = 5.0) -> None:
        self._allow = allow if isinstance(allow, HostAllowList) else HostAllowList(allow)
        self._timeout = timeout_sec

    async def run(self, request: ToolRequest) -> ToolResult:
        """Probe `request.url`; refusals, timeouts and connection errors are ``ok=False``."""
        refusal = self._refusal(request.url)
        if refusal:
            return ToolResult.failure(self.name, "refused", refusal)
        url = request.url or ""
        timeout = request.timeout_sec or self._timeout
        started = time.perf_counter()
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
                session.request(request.method, url, allow_redirects=False) as response,
            ):
                latency = _ms(started)
                status = response.status
                location = response.headers.get("Location")
        except TimeoutError:
            return self._failed("timeout", f"{url} did not answer within {timeout:g} s", started)
        except aiohttp.ClientError as e:
            return self._failed("unavailable", f"{url} could not be reached: {e}", started)
        data: dict[str, object] = {
            "url": url,
            "method": request.method,
            "status": status,
            "ok": status in _OK_STATUS,
            "latency_ms": latency,
        }
        if location:
            data["location"] = location
        return ToolResult(
            tool=self.name, ok=True, rows=[data], data=data, row_count=1, elapsed_ms=latency
        )

    def _refusal(self, url: str | None) -> str | None:
        if not url:
            return "refused: http_check needs a url"
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"}:
            return f"refused: http_check only probes http(s) URLs, not {parts.scheme or url!r}"
        if parts.username or parts.password:
            return "refused: http_check does not send credentials in URLs"
        host = parts.hostname or ""
        if not self._allow.allows(host):
            return f"refused: host {host or url!r} is not in the allow-list (TOOLS_HTTP_ALLOW)"
        return None

    def _failed(self, kind: ToolErrorKind, message: str, started: float) -> ToolResult:
        elapsed = _ms(started)
        data = {"status": None, "ok": False, "latency_ms": elapsed}
        return ToolResult.failure(self.name, kind, message, elapsed_ms=elapsed, data=data)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
