"""The Redis and nginx runbooks (issue 55, item 3) over series in the names their standard
exporters publish — prometheus-redis-exporter (oliver006) and nginx-prometheus-exporter's
stub_status (nginxinc) — served by a real Prometheus: each fault is named from the series
that show it, and a quiet server is no cause."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import answer_of
from reasoning_core.models import Synthesis
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.runbooks import load_runbooks
from reasoning_core.tools.prometheus import PrometheusTool
from storage.trees import PgTreeStore

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

END = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=1)
RUNBOOKS = load_runbooks()
REDIS = 'instance="127.0.0.1:9121",job="redis"'
NGINX = 'instance="127.0.0.1:9113",job="nginx"'
MIB = 1024 * 1024

#: name -> (type, labels, value at sample i of 121 (15 s apart; the fault from i >= 109))
Family = dict[str, tuple[str, str, Callable[[int], float]]]


def late(i: int) -> bool:
    return i >= 109  # the last 3 minutes of the half hour


def redis(fault: str | None) -> Family:
    return {
        "up": ("gauge", REDIS, lambda i: 1),
        "redis_up": ("gauge", REDIS, lambda i: 0 if fault == "down" and late(i) else 1),
        "redis_connected_clients": (
            "gauge", REDIS, lambda i: 100 if fault == "clients" and late(i) else 12,
        ),
        "redis_config_maxclients": ("gauge", REDIS, lambda i: 100),
        "redis_blocked_clients": ("gauge", REDIS, lambda i: 0),
        "redis_rejected_connections_total": (
            "counter", REDIS, lambda i: 40 * max(0, i - 108) if fault == "clients" else 0,
        ),
        "redis_memory_used_bytes": (
            "gauge", REDIS, lambda i: 63.5 * MIB if fault == "memory" and late(i) else 20 * MIB,
        ),
        "redis_memory_max_bytes": ("gauge", REDIS, lambda i: 64 * MIB),
        "redis_evicted_keys_total": (
            "counter", REDIS, lambda i: 900 * max(0, i - 108) if fault == "memory" else 0,
        ),
        "redis_commands_duration_seconds_total": ("counter", REDIS, lambda i: 0.0015 * i * 600),
        "redis_commands_total": ("counter", REDIS, lambda i: i * 600),
    }  # fmt: skip


def nginx(fault: str | None) -> Family:
    def accepted(i: int) -> float:
        return 30 * i + (60 * max(0, i - 108) if fault == "dropped" else 0)

    return {
        "up": ("gauge", NGINX, lambda i: 1),
        "nginx_up": ("gauge", NGINX, lambda i: 0 if fault == "down" and late(i) else 1),
        "nginx_connections_active": ("gauge", NGINX, lambda i: 6),
        "nginx_connections_waiting": ("gauge", NGINX, lambda i: 4),
        "nginx_connections_accepted": ("counter", NGINX, accepted),
        "nginx_connections_handled": ("counter", NGINX, lambda i: 30 * i),
        "nginx_http_requests_total": ("counter", NGINX, lambda i: 60 * i),
    }  # fmt: skip


def openmetrics(family: Family) -> str:
    start = END - timedelta(minutes=30)
    lines = []
    for name, (kind, labels, value) in family.items():
        lines.append(f"# TYPE {name.removesuffix('_total')} {kind}")
        for i in range(121):
            at = (start + timedelta(seconds=15 * i)).timestamp()
            lines.append(f"{name}{{{labels}}} {value(i):g} {at:.0f}")
    return "\n".join(lines) + "\n# EOF\n"


CASES: dict[str, Family] = {
    "redis-clients": redis("clients"),
    "redis-memory": redis("memory"),
    "redis-down": redis("down"),
    "redis-quiet": redis(None),
    "nginx-dropped": nginx("dropped"),
    "nginx-down": nginx("down"),
    "nginx-quiet": nginx(None),
}


@pytest.fixture(scope="module")
def tsdbs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    found = {}
    for name, family in CASES.items():
        folder = tmp_path_factory.mktemp(name)
        (folder / "series.om").write_text(openmetrics(family), encoding="utf-8")
        build_tsdb(folder / "series.om", folder / "tsdb")
        found[name] = folder / "tsdb"
    yield found


async def analyse(pool: asyncpg.Pool[Any], tsdb: Path, runbook: str, instance: str) -> Synthesis:
    async with LocalPrometheus(tsdb) as prometheus:
        tools: dict[str, Any] = {"prometheus": PrometheusTool(prometheus.url)}
        planner = RunbookPlanner(RUNBOOKS, tools=tools, clock=lambda: END)
        analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
        ctx = PlanningContext(
            question=runbook, goal=runbook, language="en",
            runbook=runbook, parameters={"instance": instance},
        )  # fmt: skip
        events = [e async for e in analyst.run(ctx, user_id=13, chat_id=13)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    return answer.synthesis


@pytest.mark.parametrize(
    ("case", "cause", "said"),
    [
        ("redis-clients", "clients_exhausted", "connections Redis rejected per minute"),
        ("redis-memory", "memory_full", "Redis memory / maxmemory"),
        ("redis-down", "server_down", "Redis up (redis_up)"),
    ],
)
async def test_a_redis_fault_is_named_from_its_series(
    pool: asyncpg.Pool[Any], tsdbs: dict[str, Path], case: str, cause: str, said: str
) -> None:
    synthesis = await analyse(pool, tsdbs[case], "redis_trouble", "127.0.0.1:9121")
    assert synthesis.primary.id.split(".")[0] == cause, (synthesis.primary, synthesis.evidence)
    assert synthesis.confidence >= 0.5
    assert any(said in line and "127.0.0.1:9121" in line for line in synthesis.evidence), (
        synthesis.evidence
    )


@pytest.mark.parametrize(
    ("case", "cause", "said"),
    [
        ("nginx-dropped", "connections_dropped", "connections nginx dropped per second max 4"),
        ("nginx-down", "nginx_down", "nginx up (nginx_up)"),
    ],
)
async def test_an_nginx_fault_is_named_from_its_series(
    pool: asyncpg.Pool[Any], tsdbs: dict[str, Path], case: str, cause: str, said: str
) -> None:
    synthesis = await analyse(pool, tsdbs[case], "nginx_trouble", "127.0.0.1:9113")
    assert synthesis.primary.id.split(".")[0] == cause, (synthesis.primary, synthesis.evidence)
    assert synthesis.confidence >= 0.5
    assert any(said in line for line in synthesis.evidence), synthesis.evidence


@pytest.mark.parametrize(
    ("case", "runbook", "instance"),
    [
        ("redis-quiet", "redis_trouble", "127.0.0.1:9121"),
        ("nginx-quiet", "nginx_trouble", "127.0.0.1:9113"),
    ],
)
async def test_a_quiet_server_is_no_cause(
    pool: asyncpg.Pool[Any], tsdbs: dict[str, Path], case: str, runbook: str, instance: str
) -> None:
    synthesis = await analyse(pool, tsdbs[case], runbook, instance)
    assert synthesis.primary.id == "none", (synthesis.primary, synthesis.evidence)
