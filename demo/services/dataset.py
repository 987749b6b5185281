"""The services demo: one graph with a fault on several branches, and questions to ask.

Each planted fault sits where its branch is otherwise healthy, so every example
question has one right answer: a bad deploy of search, a slow inventory that
makes cart slow (ask about cart: the root is inventory), CPU throttling of
auth, memory pressure of notifications, a crash loop of payments, a traffic
surge on recommendations, and a healthy catalog — asked about errors and latency
(service_error_spike), restarts (service_restarts) and CPU or memory
(service_saturation).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from demo.services.graph import Deploy, Fault, Scenario, Service, ServiceGraph, default_graph
from demo.services.prometheus import build_tsdb
from demo.services.simulate import SimulationStats, write_openmetrics

#: Days of history: a week of baseline (compared a week back) and a margin.
DEMO_DAYS = 9


@dataclass(frozen=True)
class ServiceQuestion:
    """A question about the demo with its known answer (hypothesis id, root service)."""

    en: str
    ru: str
    service: str
    expected: str
    root: str | None = None
    #: The alternative that should hold under a `combine: any` hypothesis (cpu, memory, ...).
    detail: str | None = None


def demo_graph() -> ServiceGraph:
    """The default shop with a `recommendations` leaf and `payments` calling nobody."""
    base = default_graph()
    services = (*base.services, Service("recommendations", rps=70.0, latency=0.040))
    edges = tuple(e for e in base.edges if e != ("payments", "auth"))
    return ServiceGraph(services, (*edges, ("frontend", "recommendations")))


def demo_scenario(seed: int = 7, *, end: datetime | None = None) -> Scenario:
    """Nine days ending at `end` (default: this minute) with the faults the questions ask about."""
    last = (end or datetime.now(UTC)).replace(second=0, microsecond=0)
    minutes = timedelta(minutes=1)
    faults = (
        Fault("deploy", "search", last - 50 * minutes),
        Fault("dependency", "inventory", last - 70 * minutes),
        Fault("cpu", "auth", last - 40 * minutes),
        Fault("memory", "notifications", last - 60 * minutes),
        Fault("crash_loop", "payments", last - 45 * minutes),
        Fault("surge", "recommendations", last - 55 * minutes),
    )
    deploys = (
        Deploy("catalog", last - timedelta(days=2, hours=3), "2.0.1"),
        Deploy("cart", last - timedelta(days=4), "1.4.3"),
    )
    return Scenario(
        graph=demo_graph(),
        start=last - timedelta(days=DEMO_DAYS),
        end=last + minutes,
        seed=seed,
        faults=faults,
        deploys=deploys,
    )


def demo_questions() -> list[ServiceQuestion]:
    """What to ask the demo, with the cause each question should get."""
    return [
        ServiceQuestion(
            "why is search returning 5xx?", "почему search отдаёт 5xx?", "search", "deploy_change"
        ),
        ServiceQuestion(
            "why is cart slow?",
            "почему растёт задержка у сервиса cart?",
            "cart",
            "slow_dependency",
            root="inventory",
        ),
        ServiceQuestion(
            "why is the latency of auth up?",
            "почему выросла задержка auth?",
            "auth",
            "container_trouble",
            detail="cpu",
        ),
        ServiceQuestion(
            "why does notifications return errors?",
            "почему у notifications ошибки 5xx?",
            "notifications",
            "container_trouble",
            detail="memory",
        ),
        ServiceQuestion(
            "why is payments returning 5xx?",
            "почему payments возвращает 500?",
            "payments",
            "container_trouble",
            detail="crash_loop",
        ),
        ServiceQuestion(
            "why is recommendations slow?",
            "почему медленно отвечает recommendations?",
            "recommendations",
            "traffic_surge",
        ),
        ServiceQuestion(
            "why is catalog slow?", "почему медленно отвечает catalog?", "catalog", "none"
        ),
        # service_restarts and service_saturation
        ServiceQuestion(
            "why do pods of payments keep restarting?",
            "почему перезапускаются поды payments?",
            "payments",
            "app_crash",
        ),
        ServiceQuestion(
            "why do pods of notifications keep restarting?",
            "почему рестартуют поды notifications?",
            "notifications",
            "oom_killed",
            detail="memory",
        ),
        ServiceQuestion(
            "why is auth CPU throttled?",
            "почему auth упирается в лимит CPU?",
            "auth",
            "own_growth",
            detail="cpu",
        ),
        ServiceQuestion(
            "why is catalog short of memory?",
            "почему catalog не хватает памяти?",
            "catalog",
            "none",
        ),
    ]


def build_scenario_tsdb(scenario: Scenario, out_dir: Path) -> SimulationStats:
    """Simulate `scenario` and turn it into TSDB blocks under `out_dir` (needs promtool)."""
    with tempfile.TemporaryDirectory(prefix="whytree-openmetrics-") as tmp:
        source = Path(tmp) / "series.om.txt"
        stats = write_openmetrics(scenario, source)
        build_tsdb(source, out_dir)
    return stats
