"""A frozen exporter under a short scrape timeout (issue 54): a real Prometheus scrapes, on
loopback with `scrape_timeout: 1s`, a process exporter that holds the connection past it and
a web service on the same host that answers. The scrape's duration stops at the timeout,
under the 3 s a slow scrape needs, so only the scrape's own error says it timed out — and
that alone follows the exporter to its host: the other target there answers."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import free_port
from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import answer_of
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.runbooks import load_runbooks
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.tools.scrape_targets import ScrapeTargetsTool
from storage.trees import PgTreeStore
from tests.reasoning_core.runbooks.test_scrape_errors import _config, _hangs, _metrics, _serve

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]


@pytest.fixture(scope="module")
async def prometheus() -> AsyncIterator[PrometheusTool]:
    ports = {"process": free_port(), "web": free_port()}
    runners = [await _serve(_hangs, ports["process"]), await _serve(_metrics, ports["web"])]
    try:
        with tempfile.TemporaryDirectory(prefix="whytree-frozen-") as tsdb:
            async with LocalPrometheus(Path(tsdb), config=_config(ports)) as server:
                tool = PrometheusTool(server.url)
                for _ in range(150):  # at most ~30 s: both scraped, the exporter failed
                    targets = await tool.active_targets()
                    health = {
                        str(t.get("labels", {}).get("job")): t.get("health") for t in targets
                    }
                    if health.get("process") == "down" and health.get("web") == "up":
                        break
                    await asyncio.sleep(0.2)
                await asyncio.sleep(35)  # two 15 s steps of the range queries in the TSDB
                yield tool
    finally:
        for runner in runners:
            await runner.cleanup()


async def test_a_timed_out_scrape_alone_follows_the_exporter_to_its_answering_host(
    pool: asyncpg.Pool[Any], prometheus: PrometheusTool
) -> None:
    tools: dict[str, Any] = {
        "prometheus": prometheus,
        "scrape_targets": ScrapeTargetsTool(prometheus),
    }
    planner = RunbookPlanner(load_runbooks(), tools=tools, clock=lambda: datetime.now(UTC))
    analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
    question = "TargetDown: process"
    ctx = PlanningContext(
        question=question, goal=question, language="en",
        runbook="target_down", parameters={"job": "process"},
    )  # fmt: skip
    events = [e async for e in analyst.run(ctx, user_id=11, chat_id=11)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    synthesis = answer.synthesis
    assert synthesis.primary.id.split(">")[-1] == "exporter_hangs_host_up", synthesis.chain
    assert not synthesis.chain_open and synthesis.confidence >= 0.5, synthesis.chain
