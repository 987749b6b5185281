"""Deep analysis with the runbook planner end to end, no LLM: DeepAnalyst, the explorer,
trees in PostgreSQL, read-only SQL on the generated demo dataset.

The demo dataset (demo.dataset, seed 7) has incidents of every kind and
healthy cells; its example questions are asked in English and Russian, with
and without "since DATE". Also: a hostile entity value, a dataset missing a
column, a question without its cell. The services runbooks run against a real
Prometheus in test_services_real_prometheus.py.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from demo.dataset import DemoDataset, ExampleQuestion, example_questions, generate_demo
from demo.loader import load_demo
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import answer_of
from reasoning_core.models import Answer, Tree
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.planners.runbook.words import detail_of
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.runbooks import load_runbooks
from reasoning_core.tools.base import Tool, ToolRequest, ToolResult
from reasoning_core.understanding import understand
from storage.sql_tool import PgSqlTool
from storage.trees import PgTreeStore

pytestmark = pytest.mark.slow

RUNBOOKS = load_runbooks()


@functools.cache
def dataset() -> DemoDataset:
    return generate_demo(7)


class RecordingTool:
    """The real tool, with every request it was sent kept for inspection."""

    def __init__(self, inner: Tool) -> None:
        self.name = inner.name
        self._inner = inner
        self.requests: list[ToolRequest] = []

    async def run(self, request: ToolRequest) -> ToolResult:
        self.requests.append(request)
        return await self._inner.run(request)


@pytest.fixture
async def sql(pool: asyncpg.Pool[Any], database_url: str) -> AsyncIterator[RecordingTool]:
    await load_demo(pool, dataset())
    tool = await PgSqlTool.connect(database_url)
    yield RecordingTool(tool)
    await tool.close()


async def ask(
    pool: asyncpg.Pool[Any], tools: dict[str, Any], question: str, language: str = "en",
    **kw: Any,
) -> tuple[Answer, Tree | None]:  # fmt: skip
    planner = RunbookPlanner(RUNBOOKS, tools=tools, **kw)
    analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
    ctx = PlanningContext(question=question, goal=question, language=language)
    events = [e async for e in analyst.run(ctx, user_id=5, chat_id=5)]
    answer = answer_of(events[-1])
    assert events[-1].kind == "answer" and answer is not None
    tree = await PgTreeStore(pool).load(answer.tree_id) if answer.tree_id else None
    return answer, tree


def one_of_each_kind() -> list[ExampleQuestion]:
    chosen: dict[tuple[str, str | None], ExampleQuestion] = {}
    for example in example_questions(dataset()):
        chosen.setdefault((example.kind, example.detail), example)
    assert set(chosen) == {
        ("technical", "availability"), ("technical", "interference"),
        ("demand", None), ("external", None), ("none", None),
    }  # fmt: skip
    return list(chosen.values())


async def test_the_right_primary_for_every_kind_in_both_languages(
    pool: asyncpg.Pool[Any], sql: RecordingTool
) -> None:
    for example in one_of_each_kind():
        asked = [(example.en, "en"), (example.ru, "ru")]
        asked += [
            (q, lang) for q, lang in ((example.en_since, "en"), (example.ru_since, "ru")) if q
        ]
        for question, language in asked:
            answer, tree = await ask(pool, {"sql": sql}, question, language)
            assert answer.synthesis is not None and tree is not None, answer.text
            primary = answer.synthesis.primary
            assert primary.id == example.kind, (question, answer.text)
            assert answer.planner == "runbook" and answer.strategy == "deep"
            heading = "Основная причина" if language == "ru" else "Primary cause"
            if example.kind == "none":
                heading = "Вывод" if language == "ru" else "Conclusion"
            assert heading in answer.text and answer.synthesis.recommendations
            assert detail_of(tree, primary.node_id) == example.detail
            if example.detail == "availability":
                title = "авария" if language == "ru" else "availability outage"
                assert title in primary.title and answer.confidence > 0.5


async def test_a_hostile_value_reaches_sql_only_as_a_bound_parameter(
    pool: asyncpg.Pool[Any], sql: RecordingTool
) -> None:
    await pool.execute("CREATE TABLE x (id int)")
    hostile = "1'; drop table x;--"
    tools = {"sql": sql}
    planner = RunbookPlanner(RUNBOOKS, tools=tools)
    analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
    ctx = PlanningContext(
        question="Why did traffic drop?", goal="traffic", parameters={"cell": hostile}
    )
    events = [e async for e in analyst.run(ctx, user_id=5, chat_id=5)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.error == "deep_failed"
    assert f"no data for cell {hostile}" in answer.text
    assert any(hostile in r.params for r in sql.requests)
    assert all("drop table" not in (r.query or "") for r in sql.requests)
    assert await pool.fetchval("SELECT count(*) FROM x") == 0  # still there
    # Typed into the question, the value is cut at the quote: "1" is no cell name, so the
    # answer asks which cell, and nothing of the text reached SQL.
    answer, _ = await ask(pool, tools, f"Why did traffic drop on cell {hostile}?")
    assert "Which cell should I look at?" in answer.text
    assert all("drop table" not in (r.query or "") for r in sql.requests)


async def test_a_dataset_without_a_column_says_what_it_lacks(
    pool: asyncpg.Pool[Any], sql: RecordingTool
) -> None:
    interference = next(e for e in one_of_each_kind() if e.detail == "interference")
    outage = next(e for e in one_of_each_kind() if e.detail == "availability")
    await pool.execute("ALTER TABLE demo.hour_stats DROP COLUMN rtwp")
    answer, _ = await ask(pool, {"sql": sql}, outage.en)  # the rest of the analysis stands
    assert answer.synthesis is not None and answer.synthesis.primary.id == "technical"
    assert "data source lacks column rtwp" in answer.text
    answer, _ = await ask(pool, {"sql": sql}, interference.en)
    assert "data source lacks column rtwp" in answer.text
    await pool.execute("ALTER TABLE demo.hour_stats DROP COLUMN ps_traffic")
    answer, _ = await ask(pool, {"sql": sql}, outage.en)  # the gate itself cannot run
    assert answer.error == "deep_failed" and "data source lacks column ps_traffic" in answer.text
    await pool.execute("DROP TABLE demo.hour_stats")
    answer, _ = await ask(pool, {"sql": sql}, outage.ru, "ru")
    assert "data source lacks table demo.hour_stats" in answer.text


async def test_without_a_cell_the_answer_asks_for_one(
    pool: asyncpg.Pool[Any], sql: RecordingTool
) -> None:
    answer, _ = await ask(pool, {"sql": sql}, "Why did traffic drop?")
    assert answer.error == "deep_failed" and "Which cell should I look at?" in answer.text
    planner = RunbookPlanner(RUNBOOKS, tools={"sql": sql})
    questions = await planner.clarifying_questions(understand("Почему упал трафик?"))
    assert questions is not None
    [question] = questions
    assert question.text.startswith("Какую соту") and len(question.options) == 4
