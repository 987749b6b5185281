"""Prometheus's alerting rules (``GET /api/v1/rules?type=alert``): an alert's expression
by its name, when its ``generatorURL`` carries none (missing, cut, another tool's link).

Read once per `ttl_sec` (one call however many alerts ask at once), at most `max_rules`
rules and `max_bytes` of answer kept; Prometheus unreachable or answering nonsense is
"no expression" (the alert still gets the change scan), logged once per reading.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from http import HTTPStatus

import aiohttp

log = logging.getLogger(__name__)


class PrometheusRules:
    def __init__(
        self,
        base_url: str,
        *,
        ttl_sec: float = 60.0,
        timeout_sec: float = 5.0,
        max_rules: int = 10_000,
        max_bytes: int = 16 << 20,
    ) -> None:
        self._url = base_url.rstrip("/") + "/api/v1/rules?type=alert"
        self._ttl = ttl_sec
        self._timeout = aiohttp.ClientTimeout(total=timeout_sec)
        self._max_rules = max_rules
        self._max_bytes = max_bytes
        self._rules: dict[str, str] = {}
        self._read_at: float | None = None
        self._lock = asyncio.Lock()

    async def expression(self, alertname: str) -> str | None:
        """The expression of the first alerting rule named `alertname`, or None."""
        async with self._lock:
            if self._read_at is None or time.monotonic() - self._read_at >= self._ttl:
                self._rules = await self._read()
                self._read_at = time.monotonic()
        return self._rules.get(alertname)

    async def _read(self) -> dict[str, str]:
        try:
            async with (
                aiohttp.ClientSession(timeout=self._timeout) as session,
                session.get(self._url) as response,
            ):
                body = await response.content.read(self._max_bytes + 1)
                if response.status != HTTPStatus.OK or len(body) > self._max_bytes:
                    log.warning(
                        "Prometheus rules (%s): HTTP %s, %d bytes",
                        self._url,
                        response.status,
                        len(body),
                    )
                    return {}
        except (aiohttp.ClientError, TimeoutError) as e:
            log.warning("Prometheus rules (%s) not read: %s", self._url, e)
            return {}
        return self._rules_of(body)

    def _rules_of(self, body: bytes) -> dict[str, str]:
        try:
            groups = json.loads(body)["data"]["groups"]
        except (ValueError, KeyError, TypeError):
            log.warning("Prometheus rules (%s): not the rules API's answer", self._url)
            return {}
        rules: dict[str, str] = {}
        for group in groups if isinstance(groups, list) else []:
            for rule in group.get("rules", []) if isinstance(group, dict) else []:
                if len(rules) >= self._max_rules:
                    return rules
                if not isinstance(rule, dict) or rule.get("type") != "alerting":
                    continue
                name, query = rule.get("name"), rule.get("query")
                if isinstance(name, str) and isinstance(query, str):
                    rules.setdefault(name, query)
        return rules
