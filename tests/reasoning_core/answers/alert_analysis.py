"""What the alert worker does with a mapped alert, over a real Prometheus: one analysis by
the runbook planner with the mapping's runbook, parameters and question. Shared by the
tests of the runbook packs (host, standard exporters)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import asyncpg

from bot.alerts import load_mapping
from bot.alerts.mapping import Investigation
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import answer_of
from reasoning_core.logs import LogTool
from reasoning_core.models import Answer, Language, Tree
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports.logs import LogSource
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.runbooks import load_runbooks
from reasoning_core.tools.base import Tool
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.understanding import understand
from reasoning_core.understanding.catalogue import KnownNames
from storage.trees import PgTreeStore

RUNBOOKS = load_runbooks()
MAPPING = load_mapping(None, runbooks=set(RUNBOOKS.runbooks))


async def analyse_alert(
    pool: asyncpg.Pool[Any],
    prometheus_url: str,
    found: Investigation,
    at: datetime,
    *,
    language: Language = "en",
    known: KnownNames | None = None,
    logs: Mapping[str, LogSource] | None = None,
) -> tuple[Answer, Tree | None]:
    """The mapped alert's analysis as of `at`: its answer and its stored tree; `logs`: the
    log sources its log checks read (none: they are left out)."""
    tools: dict[str, Tool] = {"prometheus": PrometheusTool(prometheus_url)}
    if logs:
        tools["logs"] = LogTool(logs)
    planner = RunbookPlanner(RUNBOOKS, tools=tools, clock=lambda: at)
    analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
    question = found.question(language)
    ctx = PlanningContext(
        question=question,
        goal=question,
        language=language,
        parameters=dict(found.parameters),
        runbook=found.runbook,
        request=understand(question, known, language=language),
    )
    events = [e async for e in analyst.run(ctx, user_id=5, chat_id=5)]
    answer = answer_of(events[-1])
    assert answer is not None, events[-1]
    tree = await PgTreeStore(pool).load(answer.tree_id) if answer.tree_id else None
    return answer, tree


def findings(answer: Answer, tree: Tree | None) -> str:
    """The answer and every check's evidence line (the failure message)."""
    lines = [answer.text]
    for node in tree.nodes.values() if tree else []:
        if node.result is not None:
            lines.append(f"{node.title}: {node.result.confirmed} {node.result.text}")
    return "\n".join(lines)
