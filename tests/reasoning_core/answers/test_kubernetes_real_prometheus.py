"""The Kubernetes runbooks against a real Prometheus over promtool blocks whose series follow
kube-state-metrics', cAdvisor's and the kubelet's names and behaviour (kubernetes_blocks.py).

The runbooks are first discovered against that Prometheus, as the bot does: the Kubernetes
runbooks are live, the services pack (no `http_requests_total` here) is off with the reason.
Each question then goes through DeepAnalyst with the runbook planner (no LLM), trees in
PostgreSQL, and must name the planted cause — or nothing, on a healthy object.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import answer_of
from reasoning_core.models import Language
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.runbooks import RunbookSet, load_runbooks
from reasoning_core.runbooks.discovery import Discovery, discover, read_catalogue
from reasoning_core.tools.base import Tool
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.understanding import understand
from reasoning_core.understanding.catalogue import EntityCatalogue
from storage.trees import PgTreeStore
from tests.reasoning_core.answers.alert_analysis import findings
from tests.reasoning_core.answers.kubernetes_blocks import Case, build, cases
from tests.reasoning_core.answers.test_services_real_prometheus import Served

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

KUBERNETES = {
    "k8s_crashloop", "k8s_oom_killed", "k8s_cpu_throttling", "k8s_pending_pod",
    "k8s_pvc_filling", "k8s_hpa_maxed",
}  # fmt: skip


class Cluster(Served):
    def __init__(self, served: Served, discovery: Discovery, live: RunbookSet) -> None:
        super().__init__(served.url, served.now, served.known)
        self.discovery = discovery
        self.live = live


@pytest.fixture(scope="session")
async def cluster() -> AsyncIterator[Cluster]:
    end = datetime.now(UTC).replace(second=0, microsecond=0)
    scratch = Path(tempfile.mkdtemp(prefix="whytree-k8s-tsdb-"))
    try:
        source = scratch / "series.om.txt"
        build(end).write(source)
        build_tsdb(source, scratch / "tsdb")
        async with LocalPrometheus(scratch / "tsdb") as prom:
            tool = PrometheusTool(prom.url)
            loaded = load_runbooks()
            found = discover(loaded, await read_catalogue(tool, loaded.runbooks.values()))
            live = found.live(loaded)
            catalogue = EntityCatalogue(sources=live.name_sources, tools={"prometheus": tool})
            served = Served(prom.url, end, await catalogue.snapshot())
            yield Cluster(served, found, live)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_discovery_keeps_the_kubernetes_runbooks_and_turns_the_services_pack_off(
    cluster: Cluster,
) -> None:
    statuses = cluster.discovery.statuses
    assert {s.runbook for s in statuses.values() if s.live} >= KUBERNETES
    lines = {s.runbook: s.line() for s in statuses.values()}
    assert set(cluster.live.runbooks) >= KUBERNETES | {"cell_traffic_drop"}, lines
    assert "service_error_spike" not in cluster.live.runbooks, lines
    off = statuses["service_error_spike"]
    assert not off.live and "no metric http_requests_total" in off.reasons
    assert off.line().startswith("off: no metric http_requests_total")
    assert statuses["cell_traffic_drop"].line() == "live (no Prometheus metrics to discover)"
    throttling = statuses["k8s_cpu_throttling"]
    assert throttling.labels == {"pod_label": ("pod",)}, throttling
    runbook = cluster.live.get("k8s_cpu_throttling")
    assert runbook is not None
    assert [p.default for p in runbook.parameters if p.source == "label"] == ["pod"]


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("case", cases(), ids=lambda c: f"{c.runbook}-{c.name}")
async def test_each_kubernetes_runbook_finds_its_cause_and_nothing_when_healthy(
    pool: asyncpg.Pool[Any], cluster: Cluster, case: Case, language: Language
) -> None:
    question = case.ru if language == "ru" else case.en
    tools: dict[str, Tool] = {"prometheus": PrometheusTool(cluster.url)}
    planner = RunbookPlanner(lambda: cluster.live, tools=tools, clock=lambda: cluster.now)
    analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
    request = understand(question, cluster.known, language=language)
    [best, *_] = cluster.live.match(request)
    assert best.runbook.id == case.runbook, [m.runbook.id for m in cluster.live.match(request)]
    ctx = PlanningContext(question=question, goal=question, language=language, request=request)
    events = [e async for e in analyst.run(ctx, user_id=7, chat_id=7)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    tree = await PgTreeStore(pool).load(answer.tree_id) if answer.tree_id else None
    assert answer.synthesis.primary.id == case.expected, findings(answer, tree)
    assert answer.language == language
    if case.expected != "none":
        assert answer.confidence >= 0.6, findings(answer, tree)


async def test_known_kubernetes_names_come_from_prometheus(cluster: Cluster) -> None:
    known = cluster.known
    assert known.lookup("cache-0") == [("pod", "cache-0")]
    assert known.lookup("data-postgres-0") == [("persistentvolumeclaim", "data-postgres-0")]
    assert ("namespace", "shop") in known.lookup("shop")
