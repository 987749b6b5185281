"""What changed first competes in the tree when a runbook's hypotheses end below
"established" (issue 39): the reflection revises the plan, the runbook planner adds the
change scan's top components as hypotheses, their checks read the changed series again,
and they stay candidates — below "established" — with the series on the report's chart.

Over what the lab's real exporters published while real faults ran (tests/data/lab/
lab-all.om.gz, served by a real Prometheus), the analysis read 75 s into the fault. The
runbook is the shipped http_service_trouble with its hypotheses cut to the release one, which
the pg-lock fault refutes: no hypothesis of the runbook's is left to explain the symptom.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from demo.services import LocalPrometheus, unavailable_reason
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.changes.hypotheses import SCAN_MAX, is_scan_key
from reasoning_core.changes.scanner import ChangeScanner
from reasoning_core.events import answer_of
from reasoning_core.models import Answer, Language, Node, Tree
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.reflection.reflector import ReflectionSettings
from reasoning_core.runbooks import RunbookSet, load_runbooks
from reasoning_core.tools.base import Tool
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.tree.chart_data import ChartData, chart_data
from reasoning_core.understanding import understand
from storage.trees import PgTreeStore

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

READ_AFTER = timedelta(seconds=75)
SHIPPED = load_runbooks()


def _release_only() -> RunbookSet:
    """http_service_trouble with the release hypothesis alone (the others cut)."""
    runbook = SHIPPED.get("http_service_trouble")
    assert runbook is not None
    kept = [h for h in runbook.hypotheses if h.id == "bad_release"]
    return RunbookSet([runbook.model_copy(update={"hypotheses": kept})])


@pytest.fixture
async def prometheus_url(
    lab_recording: tuple[Path, dict[str, datetime]],
) -> AsyncIterator[tuple[str, dict[str, datetime]]]:
    tsdb, starts = lab_recording
    async with LocalPrometheus(tsdb) as server:
        yield server.url, starts


async def _analyse(
    pool: asyncpg.Pool[Any],
    url: str,
    at: datetime,
    runbooks: RunbookSet,
    *,
    language: Language = "en",
) -> tuple[Answer, Tree]:
    prometheus = PrometheusTool(url, max_series=5000, max_samples=1_000_000)
    tools: dict[str, Tool] = {"prometheus": prometheus}
    scanner = ChangeScanner(prometheus, clock=lambda: at)
    planner = RunbookPlanner(runbooks, tools=tools, clock=lambda: at, changes=scanner)
    analyst = DeepAnalyst(
        tree_store=PgTreeStore(pool),
        planner=planner,
        tools=tools,
        reflection=ReflectionSettings(),
    )
    question = {"en": "Why is web slow on /checkout?", "ru": "Почему web тормозит на /checkout?"}[
        language
    ]
    ctx = PlanningContext(
        question=question,
        goal=question,
        language=language,
        parameters={"job": "web"},
        runbook="http_service_trouble",
        request=understand(question, None, language=language),
    )
    events = [e async for e in analyst.run(ctx, user_id=5, chat_id=5)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.tree_id is not None, events[-1]
    tree = await PgTreeStore(pool).load(answer.tree_id)
    assert tree is not None
    return answer, tree


def _scan_hypotheses(tree: Tree) -> list[Node]:
    return [
        n
        for n in tree.nodes.values()
        if n.node_type == "hypothesis" and is_scan_key(str(n.context.get("key", "")))
    ]


async def test_what_changed_first_becomes_a_candidate_in_the_tree(
    pool: asyncpg.Pool[Any], prometheus_url: tuple[str, dict[str, datetime]]
) -> None:
    url, starts = prometheus_url
    answer, tree = await _analyse(pool, url, starts["pg-lock"] + READ_AFTER, _release_only())

    scanned = _scan_hypotheses(tree)
    assert scanned, [n.title for n in tree.nodes.values()]
    first = next(n for n in scanned if n.context.get("key") == "scan_postgres")
    cpu = "namedprocess_namegroup_cpu_seconds_total"
    assert first.title.startswith(f"what changed first: postgres ({cpu} rose from")
    # its check read the series again: the change is there, with its numbers and points
    [check] = [n for n in tree.nodes.values() if n.parent_id == first.id]
    assert check.result is not None and check.result.confirmed is True, check.result
    assert f"postgres: {cpu} went from" in check.result.text
    assert len(check.result.data["series"]["t"]) > 20

    # a candidate, never a cause: below "established", whatever its evidence
    assert all((n.confidence or 0) <= SCAN_MAX + 1e-9 for n in scanned)
    assert answer.synthesis is not None and answer.synthesis.not_established
    assert answer.synthesis.primary.id == "scan_postgres"
    assert answer.confidence < 0.5
    assert "Primary cause: not established (best candidate: what changed first: postgres (" in (
        answer.text
    )

    # the chart: the symptom on top, the candidate's series below on the same time axis
    chart = chart_data(tree, "en")
    assert isinstance(chart, ChartData), chart
    assert chart.evidence is not None
    assert chart.evidence.label == f"postgres: {cpu} (rate)"
    assert chart.evidence.times[0] <= chart.symptom.times[-1] <= chart.evidence.times[-1]


async def test_the_candidate_in_russian(
    pool: asyncpg.Pool[Any], prometheus_url: tuple[str, dict[str, datetime]]
) -> None:
    url, starts = prometheus_url
    answer, _ = await _analyse(
        pool, url, starts["pg-lock"] + READ_AFTER, _release_only(), language="ru"
    )
    assert answer.synthesis is not None and answer.synthesis.not_established
    assert answer.synthesis.primary.title.startswith("что изменилось первым: postgres (")
    assert "изменился с" in answer.text and "до симптома" in answer.text


async def test_a_cause_the_runbook_establishes_leaves_the_scan_out(
    pool: asyncpg.Pool[Any], prometheus_url: tuple[str, dict[str, datetime]]
) -> None:
    url, starts = prometheus_url
    answer, tree = await _analyse(pool, url, starts["pg-lock"] + READ_AFTER, SHIPPED)
    assert answer.synthesis is not None and not answer.synthesis.not_established
    assert _scan_hypotheses(tree) == []
    assert "what changed first" not in answer.text
