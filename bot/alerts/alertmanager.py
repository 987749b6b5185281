"""AlertmanagerClient: the few calls of Alertmanager's API v2 whytree makes.

``GET /api/v2/status`` (reachable, its version), ``GET /api/v2/alerts`` (what fires
and what is silenced, as Alertmanager sees it), ``POST /api/v2/silences``,
``GET /api/v2/silences`` and ``DELETE /api/v2/silence/{id}``. Credentials as
Alertmanager's own ``web.config`` or a proxy in front of it wants them: a bearer
token (ALERTMANAGER_TOKEN) or basic auth (ALERTMANAGER_BASIC_AUTH=user:password).

A silence's matchers are always equality matchers (``isEqual: true``,
``isRegex: false``) whose values travel as JSON strings: a label value is never
built into matcher syntax. Any failure (refused, unreachable, timeout, a 4xx/5xx)
is an `AlertmanagerError` whose message says which, without the credentials.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import aiohttp


class AlertmanagerError(Exception):
    """Alertmanager did not do it; `status` is its HTTP status, None when it did not answer."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def equality_matchers(labels: Mapping[str, str]) -> list[dict[str, Any]]:
    """API v2 matchers: each label equal to its value, literally (no regular expression)."""
    return [
        {"name": name, "value": value, "isRegex": False, "isEqual": True}
        for name, value in sorted(labels.items())
    ]


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


class AlertmanagerClient:
    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        basic: str | None = None,
        timeout_sec: float = 5.0,
    ) -> None:
        self.url = url.rstrip("/")
        self._headers: dict[str, str] = {}
        #: Which credentials are sent (never their value): for the doctor's line.
        self.credentials = "no credentials"
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
            self.credentials = "bearer token (ALERTMANAGER_TOKEN)"
        elif basic:
            self._headers["Authorization"] = "Basic " + base64.b64encode(basic.encode()).decode()
            self.credentials = "basic auth (ALERTMANAGER_BASIC_AUTH)"
        self._timeout = aiohttp.ClientTimeout(total=timeout_sec)

    async def _call(self, method: str, path: str, *, json: Any = None) -> Any:
        try:
            async with (
                aiohttp.ClientSession(timeout=self._timeout, headers=self._headers) as http,
                http.request(method, f"{self.url}{path}", json=json) as resp,
            ):
                body = await resp.text()
                if resp.status >= 400:  # noqa: PLR2004
                    raise AlertmanagerError(
                        f"Alertmanager answered {resp.status} to {method} {path}: {body[:200]}",
                        status=resp.status,
                    )
                if not body:
                    return None
                try:
                    return await resp.json(content_type=None)
                except ValueError as e:
                    raise AlertmanagerError(
                        f"Alertmanager's answer to {method} {path} is not JSON"
                    ) from e
        except (aiohttp.ClientError, TimeoutError, OSError) as e:
            raise AlertmanagerError(
                f"Alertmanager did not answer {method} {path}: {type(e).__name__}"
            ) from e

    async def status(self) -> dict[str, Any]:
        """``/api/v2/status``: its version, cluster and configuration."""
        body = await self._call("GET", "/api/v2/status")
        if not isinstance(body, dict) or "versionInfo" not in body:
            raise AlertmanagerError("/api/v2/status is not Alertmanager's API v2 status")
        return body

    async def alerts(self, *, active: bool = True, silenced: bool = True) -> list[dict[str, Any]]:
        """``/api/v2/alerts``: each with ``labels``, ``fingerprint`` and ``status``
        (``state``, ``silencedBy``)."""
        query = f"?active={str(active).lower()}&silenced={str(silenced).lower()}&inhibited=true"
        body = await self._call("GET", f"/api/v2/alerts{query}")
        return list(body or [])

    async def push_alerts(self, alerts: list[dict[str, Any]]) -> None:
        """``POST /api/v2/alerts``: what Prometheus does (tests, the bench, the lab)."""
        await self._call("POST", "/api/v2/alerts", json=alerts)

    async def create_silence(
        self,
        labels: Mapping[str, str],
        *,
        ends_at: datetime,
        created_by: str,
        comment: str,
        starts_at: datetime | None = None,
    ) -> str:
        """The new silence's id."""
        if not labels:
            raise AlertmanagerError("a silence needs at least one matcher")
        body = {
            "matchers": equality_matchers(labels),
            "startsAt": _iso(starts_at or datetime.now(UTC)),
            "endsAt": _iso(ends_at),
            "createdBy": created_by[:200],
            "comment": comment[:1000],
        }
        answer = await self._call("POST", "/api/v2/silences", json=body)
        silence_id = answer.get("silenceID") if isinstance(answer, dict) else None
        if not isinstance(silence_id, str) or not silence_id:
            raise AlertmanagerError("Alertmanager created no silence id")
        return silence_id

    async def silences(self) -> list[dict[str, Any]]:
        """Every silence it knows (``status.state``: active, pending, expired)."""
        return list(await self._call("GET", "/api/v2/silences") or [])

    async def silence(self, silence_id: str) -> dict[str, Any] | None:
        try:
            body = await self._call("GET", f"/api/v2/silence/{_path_id(silence_id)}")
        except AlertmanagerError as e:
            if e.status == 404:  # noqa: PLR2004
                return None
            raise
        return body if isinstance(body, dict) else None

    async def expire(self, silence_id: str) -> None:
        """``DELETE /api/v2/silence/{id}``; an already expired one is not an error."""
        try:
            await self._call("DELETE", f"/api/v2/silence/{_path_id(silence_id)}")
        except AlertmanagerError as e:
            if e.status != 404 and "already expired" not in str(e):  # noqa: PLR2004
                raise


def _path_id(silence_id: str) -> str:
    """A silence id is a UUID: anything else is refused before it reaches a URL."""
    if not silence_id or any(not (c.isalnum() or c == "-") for c in silence_id):
        raise AlertmanagerError("not a silence id")
    return silence_id[:64]
