"""The services demo for a runtime: `whytree demo` builds it, whytree serves it while it runs
(a real promtool and prometheus; skipped only when they are not installed)."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from bot.config import load_settings
from bot.wiring.demo_prometheus import with_demo_prometheus
from demo.services import build_services_demo, has_services_demo, unavailable_reason
from demo.services.setup import MARKER, demo_dir

pytestmark = pytest.mark.slow


async def test_without_a_built_demo_the_settings_are_left_alone(tmp_path: Path) -> None:
    settings = load_settings(env_file=None, whytree_data_dir=tmp_path)
    async with with_demo_prometheus(settings) as served:
        assert served.tools.prometheus_url is None
    configured = load_settings(
        env_file=None, whytree_data_dir=tmp_path, prometheus_url="http://prom.example:9090"
    )
    async with with_demo_prometheus(configured) as served:
        assert served.tools.prometheus_url == "http://prom.example:9090"


@pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")
async def test_the_built_demo_is_served_while_the_runtime_runs(tmp_path: Path) -> None:
    stats = build_services_demo(tmp_path, seed=7)
    assert has_services_demo(tmp_path) and stats.series > 200
    assert json.loads((demo_dir(tmp_path) / MARKER).read_text())["seed"] == 7
    settings = load_settings(env_file=None, whytree_data_dir=tmp_path)
    async with with_demo_prometheus(settings) as served:
        url = served.tools.prometheus_url
        assert url is not None and url.startswith("http://127.0.0.1:")
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{url}/api/v1/label/service/values") as response,
        ):
            body = await response.json()
        assert "checkout" in body["data"] and "recommendations" in body["data"]
    with pytest.raises(aiohttp.ClientConnectionError):  # stopped with the runtime
        async with aiohttp.ClientSession() as session, session.get(f"{url}/-/ready"):
            pass


async def test_a_demo_that_cannot_be_served_leaves_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    demo_dir(tmp_path).mkdir(parents=True)
    (demo_dir(tmp_path) / MARKER).write_text('{"seed": 7, "end": "2999-01-01T00:00:00+00:00"}')
    (demo_dir(tmp_path) / "tsdb").write_text("not a TSDB")  # prometheus cannot open it
    settings = load_settings(env_file=None, whytree_data_dir=tmp_path)
    async with with_demo_prometheus(settings) as served:
        assert served.tools.prometheus_url is None
    assert "the services demo is not served" in caplog.text
    if unavailable_reason() is None:  # the server's own first error line says why
        assert "prometheus exited with code" in caplog.text and "level=error" in caplog.text
