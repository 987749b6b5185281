"""The freshness of a Prometheus check's result, asked of Prometheus (runbooks/freshness.py):
a conclusive verdict read from series that stopped becomes inconclusive, saying why."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from reasoning_core.models import Evidence
from reasoning_core.planners.runbook.checks import PlanState
from reasoning_core.runbooks.freshness import (
    NEWEST_SCRAPE_QUERY,
    Stopped,
    by_target,
    lagging,
    metric_names,
    newest_sample_query,
    stopped,
    target_query,
)
from reasoning_core.runbooks.model import Check, Runbook
from reasoning_core.tools.base import Tool, ToolRequest, ToolResult


async def stopped_series(
    check: Check, runbook: Runbook, state: PlanState, tools: Mapping[str, Tool]
) -> Stopped | None:
    """The first target whose series this check read stopped, or None (fresh, or not a
    Prometheus check reading mapped metrics, or Prometheus could not tell)."""
    names = metric_names(check, runbook.metrics)
    tool = tools.get("prometheus")
    if not names or tool is None:
        return None

    async def ask(query: str) -> ToolResult:
        return await tool.run(ToolRequest(query=query, time=state.anchor))

    newest, scraped = await asyncio.gather(
        ask(newest_sample_query(names)), ask(NEWEST_SCRAPE_QUERY)
    )
    if not (newest.ok and scraped.ok):
        return None
    for target, (last, lag) in lagging(by_target(newest.rows), by_target(scraped.rows)).items():
        details = await ask(target_query(*target))
        found = stopped(target, last, lag, details.rows if details.ok else [])
        if found is not None:
            return found
    return None


def stale_evidence(evidence: Evidence, gone: Stopped, language: str) -> Evidence:
    """The verdict set aside: inconclusive, the stop named (when, and why) as its text."""
    data = {
        **evidence.data,
        "stale": {
            "job": gone.job,
            "instance": gone.instance,
            "last": gone.last,
            "why": gone.why,
            "was": evidence.text,
        },
    }
    return Evidence(
        confirmed=None, confidence=0.0, text=gone.text(language), data=data, has_data=True
    )
