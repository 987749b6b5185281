"""The runbooks questions see: those live against Prometheus' catalogue, read over HTTP
(bot/wiring/discovery.py); every loaded runbook while Prometheus has not answered."""

from __future__ import annotations

import asyncio

from bot.wiring.discovery import LiveRunbooks
from demo.services.prometheus import free_port
from reasoning_core.runbooks import load_runbooks
from reasoning_core.tools.prometheus import PrometheusTool
from tests.fakes.prometheus_server import FakePrometheus

LOADED = load_runbooks()
CRASHLOOP_METRICS = [
    "kube_pod_container_status_waiting_reason", "kube_pod_container_status_restarts_total",
    "kube_pod_container_status_last_terminated_reason", "kube_pod_info",
]  # fmt: skip


async def test_only_the_runbooks_whose_metrics_prometheus_has_are_matched() -> None:
    async with FakePrometheus() as prometheus:
        prometheus.metrics = {name: ["namespace", "pod"] for name in CRASHLOOP_METRICS}
        live = LiveRunbooks(lambda: LOADED, PrometheusTool(prometheus.base_url), ttl_sec=0)
        assert set(live.live().runbooks) == set(LOADED.runbooks)  # nothing read yet
        found = await live.refresh()
        assert found is not None
        kept = set(live.live().runbooks)
        assert {"k8s_crashloop", "cell_traffic_drop"} <= kept
        assert "service_error_spike" not in kept and "k8s_pvc_filling" not in kept
        paths = [path for path, _ in prometheus.requests]
        assert paths[:2] == ["/api/v1/label/__name__/values", "/api/v1/metadata"]
        # a type the runbook does not expect switches it off at the next read
        prometheus.types = {"kube_pod_container_status_restarts_total": "gauge"}
        await live.refresh()
        assert "k8s_crashloop" not in live.live().runbooks
    # Prometheus gone: the last catalogue stays
    await live.refresh()
    assert "k8s_crashloop" not in live.live().runbooks
    assert "cell_traffic_drop" in live.live().runbooks


async def test_an_unreachable_prometheus_leaves_every_runbook_on() -> None:
    tool = PrometheusTool(f"http://127.0.0.1:{free_port()}", timeout_sec=2)
    live = LiveRunbooks(lambda: LOADED, tool, ttl_sec=0)
    assert await live.refresh() is None
    assert live.live() is LOADED
    await asyncio.wait_for(live.run(), 1)  # TTL 0: no re-reads


async def test_the_catalogue_is_read_again_every_ttl() -> None:
    async with FakePrometheus() as prometheus:
        live = LiveRunbooks(lambda: LOADED, PrometheusTool(prometheus.base_url), ttl_sec=0.05)
        await live.refresh()
        assert "k8s_crashloop" not in live.live().runbooks
        prometheus.metrics = {name: ["namespace", "pod"] for name in CRASHLOOP_METRICS}
        task = asyncio.create_task(live.run())
        try:
            for _ in range(1500):
                if "k8s_crashloop" in live.live().runbooks:
                    break
                await asyncio.sleep(0.02)
        finally:
            task.cancel()
        assert "k8s_crashloop" in live.live().runbooks


async def test_the_metric_types_are_the_last_catalogues() -> None:
    """What the change scan reads its counters by (bot/wiring/deep.py hands it these): the
    metadata discovery already reads, none before Prometheus answered, kept when it is gone."""
    async with FakePrometheus() as prometheus:
        prometheus.types = {"pg_stat_database_xact_commit": "counter"}
        live = LiveRunbooks(lambda: LOADED, PrometheusTool(prometheus.base_url), ttl_sec=0)
        assert live.metric_types() == {}
        await live.refresh()
        assert live.metric_types() == {"pg_stat_database_xact_commit": "counter"}
    await live.refresh()
    assert live.metric_types() == {"pg_stat_database_xact_commit": "counter"}
