"""ALERTMANAGER_URL: reachable, Alertmanager's API v2, credentials, silences possible.

Whether silences can be created is checked by doing it: a one-minute silence on a
label no alert carries (``alertname="whytree_doctor_probe"`` and a random
``whytree_probe`` value) is created and expired at once, so it silences nothing.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

from bot.alerts.alertmanager import AlertmanagerClient, AlertmanagerError
from bot.doctor.report import Finding

ALERTMANAGER = "Alertmanager (ALERTMANAGER_URL)"
PROBE_ALERTNAME = "whytree_doctor_probe"
_AUTH_REFUSED = (401, 403)


async def check_alertmanager(client: AlertmanagerClient | None, *, limit_sec: float) -> Finding:
    if client is None:
        return Finding.off(
            ALERTMANAGER,
            "not configured: the report's silence buttons are off",
            "set ALERTMANAGER_URL (and its credentials) to silence from the chat",
        )
    try:
        async with asyncio.timeout(limit_sec):
            status = await client.status()
            version = str((status.get("versionInfo") or {}).get("version", "?"))
            probe = {"alertname": PROBE_ALERTNAME, "whytree_probe": uuid.uuid4().hex}
            silence_id = await client.create_silence(
                probe,
                ends_at=datetime.now(UTC) + timedelta(minutes=1),
                created_by="whytree doctor",
                comment="whytree doctor: can silences be created? (expired at once)",
            )
            await client.expire(silence_id)
    except TimeoutError:
        return _fail(f"{client.url} did not answer in {limit_sec:g} s")
    except AlertmanagerError as e:
        if e.status in _AUTH_REFUSED:
            return _fail(f"{client.url} refused the credentials ({e.status})",
                         "check ALERTMANAGER_TOKEN / ALERTMANAGER_BASIC_AUTH")  # fmt: skip
        return _fail(str(e))
    return Finding.ok(ALERTMANAGER, f"API v2, version {version}; a probe silence on "
                      f"alertname={PROBE_ALERTNAME} was created and expired")  # fmt: skip


def _fail(detail: str, fix: str = "check ALERTMANAGER_URL and that Alertmanager runs") -> Finding:
    return Finding.fail(ALERTMANAGER, detail, fix, required=False)
