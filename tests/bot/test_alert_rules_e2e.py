"""An alert whose generatorURL carries no expression is routed by its rule as a real
Prometheus serves it (``/api/v1/rules``), through a real Alertmanager to the running bot;
a meta-alert of the same push is never posted (issue 53)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import yaml

from benchmarks.harness.polling_bot import harness_settings, running_bot
from bot.alerts import PrometheusRules
from bot.alerts.expression import parse_expression
from demo.services.prometheus import free_port
from fake_servers.telegram.server import FakeTelegramServer
from tests.bot.alertmanager_front import AlertmanagerFront, firing

pytestmark = pytest.mark.slow

RULES = Path(__file__).with_name("alert_rules")
CHAT = -100777


@pytest.fixture(scope="module")
async def prometheus() -> AsyncIterator[str]:
    """A real Prometheus on loopback loading the node-mixin-style rules (the manifest's
    groups as a plain rule file) and kube-prometheus-style meta-alerts; no scrapes."""
    # `make test` installs Debian's prometheus: without it the set-up is broken, not the test.
    assert shutil.which("prometheus") is not None, "prometheus is not installed (make test)"
    scratch = Path(tempfile.mkdtemp(prefix="whytree-rules-"))
    manifest = yaml.safe_load((RULES / "node-prometheusrule.yaml").read_text(encoding="utf-8"))
    (scratch / "node.yml").write_text(yaml.safe_dump(manifest["spec"]), encoding="utf-8")
    shutil.copy(RULES / "meta.yml", scratch / "meta.yml")
    config = {
        "global": {"evaluation_interval": "1h"},
        "rule_files": [str(scratch / "node.yml"), str(scratch / "meta.yml")],
    }
    (scratch / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    port = free_port()
    with (scratch / "log").open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            "prometheus",
            f"--config.file={scratch / 'prometheus.yml'}",
            f"--storage.tsdb.path={scratch / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=log,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
            while time.monotonic() < deadline:
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    async with session.get(f"{url}/-/ready") as response:
                        if response.ok:
                            break
                await asyncio.sleep(0.2)
            else:
                pytest.fail("prometheus was not ready: " + (scratch / "log").read_text())
        yield url
    finally:
        process.terminate()
        await process.wait()
        shutil.rmtree(scratch, ignore_errors=True)


async def test_the_rules_api_gives_the_expression_by_alert_name(prometheus: str) -> None:
    rules = PrometheusRules(prometheus)
    expr = await rules.expression("NodeFilesystemSpaceFillingUp")
    assert expr is not None and "predict_linear" in expr
    assert "node_filesystem_avail_bytes" in parse_expression(expr).metrics
    assert await rules.expression("instance:node_cpu_busy:rate5m") is None  # a recording rule
    assert await rules.expression("NoSuchAlert") is None
    assert await PrometheusRules(f"http://127.0.0.1:{free_port()}").expression("Watchdog") is None


@pytest.mark.alertmanager(group_by=["alertname"])
async def test_an_alert_without_generator_url_is_routed_by_its_rule_and_watchdog_is_quiet(
    alertmanager: AlertmanagerFront,
    telegram: FakeTelegramServer,
    database_url: str,
    prometheus: str,
) -> None:
    settings = harness_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=None,
        prometheus_url=prometheus,
        alert_chats=f"default:{CHAT}",
        **alertmanager.bot_settings,
    )
    filling = {
        "alertname": "NodeFilesystemSpaceFillingUp",
        "instance": "web-1:9100",
        "mountpoint": "/var",
        "severity": "warning",
    }
    async with running_bot(settings, telegram):
        await alertmanager.push(
            firing({"alertname": "Watchdog", "severity": "none"}, expr="vector(1)"),
            firing(filling, expr=None),
            # cut short on its way (a proxy's URL limit): the rule is read by name; its labels
            # lack `instance` (aggregated away): the parameter is left out, never refused
            firing(
                {"alertname": "NodeClockOffTooFar", "cluster": "eu-1"},
                expr="(node_timex_offset_seconds{job=",
            ),
        )
        await telegram.wait_for(lambda: len(telegram.sent_messages(CHAT)) >= 4, timeout=120)
        await asyncio.sleep(3)  # Watchdog's group had its time to be posted, were it posted
    texts = [m.text for m in telegram.sent_messages(CHAT)]
    assert not any("Watchdog" in t for t in texts), texts
    [header] = [t for t in texts if t.startswith("🔔 <b>NodeFilesystemSpaceFillingUp</b>")]
    assert "runbook <code>host_disk</code>" in header, header
    assert "no label for parameter" not in header
    [clock] = [t for t in texts if t.startswith("🔔 <b>NodeClockOffTooFar</b>")]
    assert "no label for parameter instance of the runbook: left out" in clock, clock
    assert "host_clock" in clock, clock
