"""The services runbook pack against a real Prometheus over generated TSDB blocks.

One session builds the services demo (demo.services.dataset: nine days at one
minute for eleven services, faults on separate branches) into TSDB blocks with
promtool and starts `prometheus` over them; each example question then goes
through DeepAnalyst with the runbook planner (no LLM), trees in PostgreSQL, and
must name the planted cause — and for a slow dependency, the root service.
Skipped only when the prometheus/promtool binaries are missing (with the reason).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.dataset import build_scenario_tsdb, demo_questions, demo_scenario
from demo.services.prometheus import free_port
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import answer_of
from reasoning_core.models import Answer, Language, Tree
from reasoning_core.planners.runbook.checks import PlanState, RunbookInputError, build_request
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.planners.runbook.words import detail_of
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.runbooks import load_runbooks
from reasoning_core.tools.base import Tool, ToolRequest, ToolResult
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.understanding import understand
from reasoning_core.understanding.catalogue import EntityCatalogue, KnownNames
from storage.trees import PgTreeStore
from tests.reasoning_core.answers.alert_analysis import findings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

RUNBOOKS = load_runbooks()
#: The alternatives that count for an expected detail (OOM kills are memory pressure).
DETAILS = {"cpu": {"cpu"}, "memory": {"memory", "oom"}, "crash_loop": {"crash_loop"}}


class Served:
    """The running Prometheus, the time its data ends (the analyses' "now") and the
    services it knows (read as the bot reads them: `EntityCatalogue` over label values)."""

    def __init__(self, url: str, now: datetime, known: KnownNames) -> None:
        self.url = url
        self.now = now
        self.known = known


@pytest.fixture(scope="session")
async def served() -> AsyncIterator[Served]:
    scenario = demo_scenario(7)
    scratch = Path(tempfile.mkdtemp(prefix="whytree-tsdb-"))
    try:
        build_scenario_tsdb(scenario, scratch)
        async with LocalPrometheus(scratch) as prom:
            catalogue = EntityCatalogue(
                sources=RUNBOOKS.name_sources, tools={"prometheus": PrometheusTool(prom.url)}
            )
            known = await catalogue.snapshot()
            yield Served(prom.url, scenario.end - timedelta(minutes=1), known)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class Counting:
    def __init__(self, inner: Tool) -> None:
        self.name = inner.name
        self._inner = inner
        self.requests: list[ToolRequest] = []

    async def run(self, request: ToolRequest) -> ToolResult:
        self.requests.append(request)
        return await self._inner.run(request)


async def ask(
    pool: asyncpg.Pool[Any], served: Served, question: str, language: Language = "en",
    tool: Tool | None = None,
) -> tuple[Answer, Tree | None]:  # fmt: skip
    tools: dict[str, Tool] = {"prometheus": tool or PrometheusTool(served.url)}
    planner = RunbookPlanner(RUNBOOKS, tools=tools, clock=lambda: served.now)
    analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
    request = understand(question, served.known, language=language)  # as the bot does
    ctx = PlanningContext(question=question, goal=question, language=language, request=request)
    events = [e async for e in analyst.run(ctx, user_id=5, chat_id=5)]
    answer = answer_of(events[-1])
    assert events[-1].kind == "answer" and answer is not None
    tree = await PgTreeStore(pool).load(answer.tree_id) if answer.tree_id else None
    return answer, tree


def root_of(tree: Tree | None) -> str | None:
    """The root service the dependency walk named, from the tree's evidence."""
    assert tree is not None
    for node in tree.nodes.values():
        evidence = node.result
        if evidence is not None and evidence.confirmed and "root_service" in evidence.data:
            return str(evidence.data["root_service"])
    return None


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("case", demo_questions(), ids=lambda q: f"{q.service}-{q.expected}")
async def test_every_runbook_finds_the_planted_cause(
    pool: asyncpg.Pool[Any], served: Served, case: Any, language: Language
) -> None:
    question = case.ru if language == "ru" else case.en
    answer, tree = await ask(pool, served, question, language)
    assert answer.synthesis is not None, answer.text
    assert answer.synthesis.primary.id == case.expected, findings(answer, tree)
    assert answer.language == language
    if case.detail:
        assert tree is not None
        primary = answer.synthesis.primary.node_id
        assert detail_of(tree, primary) in DETAILS[case.detail], findings(answer, tree)
    if case.root:
        assert root_of(tree) == case.root, findings(answer, tree)
    if case.expected != "none":
        assert answer.confidence >= 0.6, findings(answer, tree)


async def test_known_services_come_from_prometheus_label_values(served: Served) -> None:
    known = served.known
    assert known.lookup("Checkout") == [("service", "checkout")]
    assert "recommendations" in known.names["service"].values()
    assert known.suggest("service", "checkuot") == ["checkout"]


# --- bad input ------------------------------------------------------------------------


async def test_a_service_without_series_is_named_with_the_missing_metric(
    pool: asyncpg.Pool[Any], served: Served
) -> None:
    tools: dict[str, Tool] = {"prometheus": PrometheusTool(served.url)}
    planner = RunbookPlanner(RUNBOOKS, tools=tools, clock=lambda: served.now)
    analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
    for question, language, expected in (
        (
            "why is billing returning 5xx?",
            "en",
            "no metric http_requests_total for service billing",
        ),
        (
            "почему billing отдаёт 5xx?",
            "ru",
            "нет метрики http_requests_total для service billing",
        ),
    ):
        ctx = PlanningContext(question=question, goal=question, language=language)
        events = [e async for e in analyst.run(ctx, user_id=5, chat_id=5)]
        answer = answer_of(events[-1])
        assert answer is not None and expected in answer.text, answer and answer.text


async def test_a_hostile_service_name_never_reaches_promql(served: Served) -> None:
    runbook = RUNBOOKS.get("service_error_spike")
    assert runbook is not None
    [match, *_] = RUNBOOKS.match(understand("why is checkout slow?"))
    state = PlanState(
        runbook=runbook.id, language="en", anchor=served.now, window=match.window(served.now),
        params={"service": 'checkout"} or vector(1) #'},
    )  # fmt: skip
    with pytest.raises(RunbookInputError, match="not a plain identifier"):
        build_request(runbook.check("error_ratio_up"), runbook, state)


async def test_a_range_too_long_for_its_step_is_refused_with_the_reason(served: Served) -> None:
    tool = PrometheusTool(served.url)
    result = await tool.run(
        ToolRequest(query="up", start=served.now - timedelta(days=30), end=served.now,
                    step_sec=60)
    )  # fmt: skip
    assert not result.ok and result.error is not None
    assert "too long for a 60 s step" in result.error and "43201 points" in result.error
    week = await tool.run(
        ToolRequest(query="sum(rate(http_requests_total[5m]))",
                    start=served.now - timedelta(days=7), end=served.now, step_sec=300)
    )  # fmt: skip
    assert week.ok and week.row_count == 1


async def test_prometheus_down_says_what_could_not_be_checked(
    pool: asyncpg.Pool[Any], served: Served
) -> None:
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    answer, _ = await ask(
        pool, served, "why is search returning 5xx?", tool=PrometheusTool(closed)
    )
    assert answer.synthesis is None or answer.synthesis.primary.id != "deploy_change"
    assert "Prometheus could not be reached" in answer.text, answer.text
