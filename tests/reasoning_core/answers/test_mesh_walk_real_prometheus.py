"""Following a mesh's calls to the origin (issue 55, item 3): Istio's series of a small shop
(tests/reasoning_core/answers/mesh_blocks.py) served by a real Prometheus, and the
mesh_service_trouble runbook asked about `front`, the first caller. A fault deep in the
graph makes every caller on its way slow: the walk names the deepest service whose own
answers changed, says the path, says when the time is a service's own, finds a delay on the
way between two services, and leaves out what a graph cannot place — a self-call, a cycle,
a series without a label — with a line saying so. A blackbox probe of the front door names
no workload: endpoint_probe walks the calls from where requests come in."""

from __future__ import annotations

from collections.abc import Iterator
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
from tests.reasoning_core.answers.mesh_blocks import PROBE, Extra, Fault, series

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

END = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=1)
FAULT_AT = END - timedelta(minutes=3, seconds=30)
RUNBOOKS = load_runbooks()

CASES: dict[str, tuple[Fault | None, Extra | None]] = {
    "stock_slow": (Fault(FAULT_AT, own_ms={"stock": 400.0}), None),
    "stock_very_slow": (Fault(FAULT_AT, own_ms={"stock": 1500.0}), None),
    "checkout_own": (Fault(FAULT_AT, own_ms={"checkout": 300.0}), None),
    "way_to_stock": (Fault(FAULT_AT, way_ms={("checkout", "stock"): 350.0}), None),
    "odd_graph": (
        Fault(FAULT_AT, own_ms={"stock": 400.0}),
        Extra(self_call="front", unlabelled_call="cart", call_back=("stock", "checkout")),
    ),
    "quiet": (None, None),
}


@pytest.fixture(scope="module")
def tsdbs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    found = {}
    for name, (fault, extra) in CASES.items():
        folder = tmp_path_factory.mktemp(f"mesh-{name}")
        (folder / "series.om").write_text(series(END, 30, fault, extra), encoding="utf-8")
        build_tsdb(folder / "series.om", folder / "tsdb")
        found[name] = folder / "tsdb"
    yield found


async def analyse(
    pool: asyncpg.Pool[Any],
    tsdb: Path,
    *,
    language: str = "en",
    question: str = "IstioLatency99Percentile",
    runbook: str = "mesh_service_trouble",
    parameters: dict[str, Any] | None = None,
) -> Synthesis:
    async with LocalPrometheus(tsdb) as prometheus:
        tools: dict[str, Any] = {"prometheus": PrometheusTool(prometheus.url)}
        planner = RunbookPlanner(RUNBOOKS, tools=tools, clock=lambda: END)
        analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
        ctx = PlanningContext(
            question=question, goal=question, language=language, runbook=runbook,
            parameters=parameters or {"destination_workload": "front"},
        )  # fmt: skip
        events = [e async for e in analyst.run(ctx, user_id=12, chat_id=12)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    return answer.synthesis


def walk_line(synthesis: Synthesis) -> str:
    lines = [line for line in synthesis.evidence if "→" in line]
    assert lines, synthesis.evidence
    print("report line:", lines[0])  # noqa: T201 - the line the report says, for the reader
    return lines[0][lines[0].index("front") :]  # after the verdict's word


async def test_a_slow_deep_service_is_named_not_its_first_caller(
    pool: asyncpg.Pool[Any], tsdbs: dict[str, Path]
) -> None:
    synthesis = await analyse(pool, tsdbs["stock_slow"])
    assert synthesis.primary.id == "call_origin", synthesis.primary
    assert synthesis.primary.title.endswith("the latency of workload stock"), (
        synthesis.primary.title
    )
    line = walk_line(synthesis)
    onset = f"{FAULT_AT:%H:%M}"
    assert line.startswith("front → checkout → stock: stock's own latency rose first, "), line
    assert onset in line, (onset, line)
    assert "it calls no other service: the time is its own" in line
    assert synthesis.confidence >= 0.5


async def test_a_service_whose_calls_did_not_change_has_the_time_of_its_own(
    pool: asyncpg.Pool[Any], tsdbs: dict[str, Path]
) -> None:
    synthesis = await analyse(pool, tsdbs["checkout_own"])
    assert synthesis.primary.title.endswith("workload checkout"), synthesis.primary.title
    line = walk_line(synthesis)
    assert line.startswith("front → checkout: checkout's own latency rose first, "), line
    assert "its calls did not change (cart, payment, stock): the time is its own" in line


async def test_a_slow_way_between_two_services_names_the_callee(
    pool: asyncpg.Pool[Any], tsdbs: dict[str, Path]
) -> None:
    synthesis = await analyse(pool, tsdbs["way_to_stock"])
    assert synthesis.primary.title.endswith("slower calls into workload stock"), (
        synthesis.primary.title
    )
    line = walk_line(synthesis)
    assert line.startswith("front → checkout → stock: checkout's calls to stock changed first"), (
        line
    )
    assert "the trouble is on the way into stock" in line


async def test_a_self_call_a_cycle_and_a_missing_label_are_left_out_with_a_line(
    pool: asyncpg.Pool[Any], tsdbs: dict[str, Path]
) -> None:
    synthesis = await analyse(pool, tsdbs["odd_graph"])
    assert synthesis.primary.title.endswith("workload stock"), synthesis.primary.title
    line = walk_line(synthesis)
    assert line.startswith("front → checkout → stock: stock's own latency rose first"), line
    assert "ignored: " in line
    assert "series without source_workload: 1" in line
    assert "front calling itself" in line
    assert "a call back from stock to checkout (a cycle)" in line


async def test_nothing_changed_is_no_cause(
    pool: asyncpg.Pool[Any], tsdbs: dict[str, Path]
) -> None:
    synthesis = await analyse(pool, tsdbs["quiet"])
    assert synthesis.primary.id == "none", synthesis.primary
    assert any("nothing changed in front's own answers" in e for e in synthesis.evidence), (
        synthesis.evidence
    )


async def test_the_walk_is_said_in_russian(
    pool: asyncpg.Pool[Any], tsdbs: dict[str, Path]
) -> None:
    synthesis = await analyse(pool, tsdbs["stock_slow"], language="ru")
    line = walk_line(synthesis)
    assert line.startswith(
        "front → checkout → stock: первыми выросли собственные задержки stock"
    ), line
    assert "время уходит в нём самом" in line
    assert "stock" in synthesis.primary.title and "сервис" in synthesis.primary.title


async def test_a_slow_probe_of_the_front_door_follows_the_calls_from_the_entry(
    pool: asyncpg.Pool[Any], tsdbs: dict[str, Path]
) -> None:
    """BlackboxSlowProbe names a URL, no workload: the walk starts at front (the workload
    called from outside the mesh) and names stock, not front nor PostgreSQL."""
    synthesis = await analyse(
        pool, tsdbs["stock_very_slow"], question="BlackboxSlowProbe",
        runbook="endpoint_probe", parameters={"target": PROBE},
    )  # fmt: skip
    assert synthesis.primary.id == "mesh_origin", (synthesis.primary, synthesis.evidence)
    assert synthesis.primary.title.endswith("workload stock"), synthesis.primary.title
    assert walk_line(synthesis).startswith("front → checkout → stock: stock's own latency")
