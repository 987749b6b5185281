"""`whytree doctor`'s Alertmanager line against a real Alertmanager, straight and behind a
basic-auth proxy: reachable, API v2, credentials (a 401 or 403 is its own clear line),
silences readable; it creates no silence and says so."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import aiohttp
import pytest
from aiohttp import web

from bot.alerts.alertmanager import AlertmanagerClient
from bot.alerts.alertmanager_runner import (
    RunningAlertmanager,
    running_alertmanager,
    stop,
)
from bot.doctor.alertmanager import check_alertmanager
from bot.doctor.report import Finding
from tests.bot.alertmanager_front import NEEDS_ALERTMANAGER

pytestmark = [pytest.mark.slow, NEEDS_ALERTMANAGER]

TOKEN = "am-webhook-token-for-tests"
#: The proxy's users: "user:password" -> the paths each may call.
USERS = {"ops:s3cret": ("/api/v2/",), "viewer:pw": ("/api/v2/status",)}


@pytest.fixture
async def am() -> AsyncIterator[RunningAlertmanager]:
    async with running_alertmanager("http://127.0.0.1:9/alerts/alertmanager", token=TOKEN) as am:
        yield am


@asynccontextmanager
async def basic_auth_proxy(
    upstream: str, users: Mapping[str, tuple[str, ...]]
) -> AsyncIterator[str]:
    """A reverse proxy in front of `upstream` as one guards Alertmanager in production:
    401 without a known user, 403 for a path the user may not call; its URL."""
    allowed = {
        "Basic " + base64.b64encode(user.encode()).decode(): paths for user, paths in users.items()
    }

    async def forward(request: web.Request) -> web.StreamResponse:
        paths = allowed.get(request.headers.get("Authorization", ""))
        if paths is None:
            return web.Response(status=401, headers={"WWW-Authenticate": "Basic"})
        if not request.path.startswith(paths):
            return web.Response(status=403, text="forbidden")
        async with (
            aiohttp.ClientSession() as http,
            http.request(
                request.method,
                f"{upstream}{request.path_qs}",
                data=await request.read(),
                headers={"Content-Type": request.headers.get("Content-Type", "text/plain")},
            ) as resp,
        ):
            return web.Response(status=resp.status, body=await resp.read(),
                                content_type=resp.content_type)  # fmt: skip

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def doctor(url: str, *, token: str | None = None, basic: str | None = None) -> Finding:
    client = AlertmanagerClient(url, token=token, basic=basic)
    return await check_alertmanager(client, limit_sec=10)


async def test_the_doctor_reads_the_real_alertmanager_and_creates_nothing(
    am: RunningAlertmanager,
) -> None:
    found = await doctor(am.url)
    assert found.status == "ok", found
    assert "API v2, version 0." in found.detail and "cluster disabled" in found.detail
    assert "silences readable with no credentials (0 active)" in found.detail
    assert "creating one not tried" in found.detail
    assert await am.client.silences() == []  # the doctor changed nothing

    # A URL that is not Alertmanager's API: its own line, not "refused".
    found = await doctor(f"{am.url}/elsewhere")
    assert found.status == "fail", found
    assert (
        found.detail
        == f"{am.url}/elsewhere is not Alertmanager's API v2 (404 to GET /api/v2/status)"
    )

    await stop(am)
    found = await doctor(am.url, token="t0psecret")
    assert (found.status, found.required) == ("fail", False)
    assert "did not answer GET /api/v2/status" in found.detail, found
    assert "t0psecret" not in found.detail + found.fix


async def test_the_doctor_behind_a_basic_auth_proxy_names_the_refused_credentials(
    am: RunningAlertmanager,
) -> None:
    async with basic_auth_proxy(am.url, USERS) as proxy:
        found = await doctor(proxy, basic="ops:s3cret")
        assert found.status == "ok", found
        assert "silences readable with basic auth (ALERTMANAGER_BASIC_AUTH)" in found.detail

        found = await doctor(proxy, basic="ops:wrong")
        assert found.status == "fail"
        assert found.detail == (
            f"{proxy} refused the basic auth (ALERTMANAGER_BASIC_AUTH) (401 to GET /api/v2/status)"
        )
        assert "ALERTMANAGER_BASIC_AUTH" in found.fix and "wrong" not in found.detail + found.fix

        found = await doctor(proxy)
        assert found.status == "fail" and "asks for credentials (401" in found.detail, found
        assert "set ALERTMANAGER_TOKEN or ALERTMANAGER_BASIC_AUTH" in found.fix

        # A user who may read the status but not the silences: the 403 names the call.
        found = await doctor(proxy, basic="viewer:pw")
        assert found.status == "fail"
        assert "(403 to GET /api/v2/silences)" in found.detail, found
    assert await am.client.silences() == []
