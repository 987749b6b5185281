"""Alertmanager's webhook notifications, in the documented version 4 shape, and a sender.

For tests and `whytree bench alerts`: the receiver gets exactly what Alertmanager
POSTs (``webhook_config``), with the Authorization header its ``http_config`` sends.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlencode

import aiohttp

ZERO_TIME = "0001-01-01T00:00:00Z"
_STARTED = datetime(2024, 5, 20, 8, 0, tzinfo=UTC)


def fingerprint(labels: dict[str, str]) -> str:
    """A stable fingerprint of a label set (Alertmanager uses a 64-bit hash in hex)."""
    text = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def alert(
    labels: dict[str, str],
    *,
    status: Literal["firing", "resolved"] = "firing",
    ended: datetime | None = None,
    expr: str | None = None,
) -> dict[str, Any]:
    """One alert of a webhook payload; its generatorURL carries `expr` (None: a link to
    Prometheus's graph page with no expression, so the rule is read by its name)."""
    ends = ZERO_TIME if status == "firing" else (ended or _STARTED + timedelta(hours=1))
    return {
        "status": status,
        "labels": labels,
        "annotations": {"summary": f"{labels.get('alertname')} on {labels}"},
        "startsAt": _STARTED.isoformat().replace("+00:00", "Z"),
        "endsAt": ends if isinstance(ends, str) else ends.isoformat().replace("+00:00", "Z"),
        "generatorURL": "http://prometheus.example:9090/graph?"
        + urlencode({"g0.expr": expr} if expr is not None else {"g0.tab": "1"}),
        "fingerprint": fingerprint(labels),
    }


def notification(alerts: list[dict[str, Any]], *, receiver: str = "whytree") -> dict[str, Any]:
    """One group notification: status firing while any alert fires."""
    firing = any(a["status"] == "firing" for a in alerts)
    names = sorted({a["labels"].get("alertname", "") for a in alerts})
    common = {
        k: v
        for k, v in alerts[0]["labels"].items()
        if all(a["labels"].get(k) == v for a in alerts)
    }
    return {
        "version": "4",
        "groupKey": '{}:{alertname="' + ",".join(names) + '"}',
        "truncatedAlerts": 0,
        "status": "firing" if firing else "resolved",
        "receiver": receiver,
        "groupLabels": {"alertname": names[0]},
        "commonLabels": common,
        "commonAnnotations": {},
        "externalURL": "http://alertmanager.example:9093",
        "alerts": alerts,
    }


async def post_alerts(
    session: aiohttp.ClientSession, url: str, body: Any, *, token: str | None
) -> tuple[int, dict[str, Any]]:
    """POST to the receiver as Alertmanager does; the status and the JSON answer."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with session.post(f"{url}/alerts/alertmanager", json=body, headers=headers) as resp:
        return resp.status, await resp.json(content_type=None)
