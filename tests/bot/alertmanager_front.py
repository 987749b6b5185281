"""A real Alertmanager in front of the bot under test: alerts arrive as production sends them.

The `alertmanager` fixture (tests/bot/conftest.py) starts Alertmanager on a free
loopback port, its one receiver whytree's webhook with ``http_config`` credentials,
at the address the bot under test is to listen on (`bot_settings`). A test pushes
alerts to Alertmanager's API v2 as Prometheus does (`firing`, `resolved`);
Alertmanager groups, repeats and resolves them and calls the webhook itself.

Timing is short so a test sees a group, a repeat and a resolution within seconds;
``@pytest.mark.alertmanager(group_by=..., timing=Timing(...))`` changes it for a test.
Every wait is bounded and generous (a 2-core machine shared by several test runs).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.alerts.alertmanager_runner import (
    RunningAlertmanager,
    Timing,
    alertmanager_binary,
    log_tail,
)

NOT_INSTALLED = "Alertmanager is not installed (Debian package prometheus-alertmanager)"
#: The skip mark of a test that needs the real Alertmanager.
NEEDS_ALERTMANAGER = pytest.mark.skipif(alertmanager_binary() is None, reason=NOT_INSTALLED)

WEBHOOK_TOKEN = "am-webhook-token-for-tests"
GROUP_BY = ("alertname", "cell")
TIMING = Timing(group_wait=0.3, group_interval=0.5, repeat_interval=1.0)
#: How long a test waits for something Alertmanager or the bot does (generous: load).
WAIT_SEC = 60.0


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def firing(
    labels: Mapping[str, str], *, since: datetime | None = None, expr: str | None = None
) -> dict[str, Any]:
    """A firing alert as Prometheus posts it to ``/api/v2/alerts`` (no endsAt: it fires
    until it is resolved or Alertmanager's resolve_timeout passes); its generatorURL
    carries `expr` (None, the default: no generatorURL, the rule is read from Prometheus)."""
    starts = since or datetime.now(UTC) - timedelta(minutes=10)
    return {
        "labels": dict(labels),
        "annotations": {"summary": f"{labels.get('alertname')} fires"},
        "startsAt": _iso(starts),
        **({"generatorURL": _graph_url(expr)} if expr is not None else {}),
    }


def _graph_url(expr: str) -> str:
    """The link Prometheus puts in an alert: its expression in ``g0.expr``."""
    return "http://prometheus.example:9090/graph?" + urlencode({"g0.expr": expr, "g0.tab": "1"})


def resolved(labels: Mapping[str, str], *, at: datetime) -> dict[str, Any]:
    """The same alert, ended at `at` (in the past): Alertmanager notifies it resolved."""
    alert = firing(labels, since=at - timedelta(minutes=10))
    alert["endsAt"] = _iso(at)
    return alert


def minute_ago() -> datetime:
    """A resolution time a report shows to the minute ("Resolved at 09:45 UTC")."""
    return (datetime.now(UTC) - timedelta(minutes=1)).replace(second=0, microsecond=0)


@dataclass(frozen=True)
class AlertmanagerFront:
    am: RunningAlertmanager
    #: Where the bot under test listens (API_LISTEN): the webhook Alertmanager calls.
    api_listen: str
    token: str = WEBHOOK_TOKEN

    @property
    def bot_settings(self) -> dict[str, Any]:
        """The bot's settings that meet this Alertmanager (for `harness_settings`)."""
        return {
            "api_listen": self.api_listen,
            "alert_webhook_token": self.token,
            "alertmanager_url": self.am.url,
        }

    async def push(self, *alerts: dict[str, Any]) -> None:
        await self.am.client.push_alerts(list(alerts))

    async def sent(self) -> int:
        return await self.am.notifications_sent()

    async def wait_until(
        self, what: str, check: Callable[[], Awaitable[bool]], *, seconds: float = WAIT_SEC
    ) -> None:
        """Poll `check` until it holds; AssertionError naming `what` (and Alertmanager's
        log) after `seconds`."""
        deadline = time.monotonic() + seconds
        while not await check():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"not within {seconds:g} s: {what}\nAlertmanager's log:\n{log_tail(self.am)}"
                )
            await asyncio.sleep(0.1)

    async def wait_sent(self, at_least: int, *, seconds: float = WAIT_SEC) -> int:
        """Wait until Alertmanager has delivered `at_least` webhook notifications in all."""

        async def enough() -> bool:
            return await self.sent() >= at_least

        await self.wait_until(f"{at_least} notifications delivered", enough, seconds=seconds)
        return await self.sent()
