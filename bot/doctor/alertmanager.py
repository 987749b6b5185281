"""ALERTMANAGER_URL: reachable, Alertmanager's API v2, credentials, silences readable.

The doctor changes nothing in Alertmanager: it reads ``GET /api/v2/status`` (reachable,
API v2, version, cluster state) and ``GET /api/v2/silences`` with whytree's credentials
(ALERTMANAGER_TOKEN / ALERTMANAGER_BASIC_AUTH). A 401 or 403 on either is its own line,
naming the call and the credentials sent. No silence is created, so the line says that
creating one was not tried: a proxy may let whytree read and still refuse
``POST /api/v2/silences``, which the first 🔕 press then reports in the chat.
"""

from __future__ import annotations

import asyncio

from bot.alerts.alertmanager import AlertmanagerClient, AlertmanagerError
from bot.doctor.report import Finding

ALERTMANAGER = "Alertmanager (ALERTMANAGER_URL)"
_AUTH_REFUSED = (401, 403)
_NOT_FOUND = 404
_CREDENTIALS_FIX = "check ALERTMANAGER_TOKEN / ALERTMANAGER_BASIC_AUTH"
_NO_CREDENTIALS_FIX = "set ALERTMANAGER_TOKEN or ALERTMANAGER_BASIC_AUTH to what it asks for"


async def check_alertmanager(client: AlertmanagerClient | None, *, limit_sec: float) -> Finding:
    if client is None:
        return Finding.off(
            ALERTMANAGER,
            "not configured: the report's silence buttons are off",
            "set ALERTMANAGER_URL (and its credentials) to silence from the chat",
        )
    step = "GET /api/v2/status"
    try:
        async with asyncio.timeout(limit_sec):
            status = await client.status()
            step = "GET /api/v2/silences"
            silences = await client.silences()
    except TimeoutError:
        return _fail(f"{client.url} did not answer {step} in {limit_sec:g} s")
    except AlertmanagerError as e:
        return _refused(client, step, e)
    version = str((status.get("versionInfo") or {}).get("version", "?"))
    cluster = str((status.get("cluster") or {}).get("status", "?"))
    active = sum((s.get("status") or {}).get("state") == "active" for s in silences)
    return Finding.ok(
        ALERTMANAGER,
        f"API v2, version {version}, cluster {cluster}; silences readable with "
        f"{client.credentials} ({active} active); creating one not tried (the doctor "
        "changes nothing: the first 🔕 press does)",
    )


def _refused(client: AlertmanagerClient, step: str, e: AlertmanagerError) -> Finding:
    if e.status in _AUTH_REFUSED:
        if client.credentials == "no credentials":
            return _fail(
                f"{client.url} asks for credentials ({e.status} to {step}); none are set",
                _NO_CREDENTIALS_FIX,
            )
        return _fail(
            f"{client.url} refused the {client.credentials} ({e.status} to {step})",
            _CREDENTIALS_FIX,
        )
    if e.status == _NOT_FOUND or "API v2" in str(e) or "not JSON" in str(e):
        why = f"{e.status} to {step}" if e.status else f"its answer to {step} is not API v2's"
        return _fail(
            f"{client.url} is not Alertmanager's API v2 ({why})",
            "set ALERTMANAGER_URL to Alertmanager's base URL (API v2: Alertmanager 0.16 or later)",
        )
    return _fail(str(e))


def _fail(detail: str, fix: str = "check ALERTMANAGER_URL and that Alertmanager runs") -> Finding:
    return Finding.fail(ALERTMANAGER, detail, fix, required=False)
