"""The "because" step of the explorer (issue 54), end to end with the runbook planner and
trees in real PostgreSQL: a confirmed lock queue whose holder waits on something grows a
link, and the report says the chain — to its cause when the link is checked, or with the
open link as the uncertainty (never a cause at 🟡/🟢) when it cannot be; a wait whytree
does not know is named as it is; a chain that loops, or runs past LINK_DEPTH, stops and
says where. Holders come from a real server (`row_lock_held`) or, for a disk wait this
machine cannot cause, from a recorded `pg_sessions` answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg
import pytest

from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.events import Event, answer_of
from reasoning_core.explore.budgets import Budgets
from reasoning_core.models import Answer
from reasoning_core.planners.runbook.planner import RunbookPlanner
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.runbooks import load_runbooks
from reasoning_core.tools.base import ToolRequest, ToolResult
from reasoning_core.tree.links import OPEN_LINK_MAX
from reasoning_core.tree.report import render_report_text, report_of
from storage.pg_sessions import PgSessionsTool
from storage.trees import PgTreeStore
from tests.pg import row_lock_held

pytestmark = pytest.mark.slow

HEAD = """
id: lock_queue
title: {en: Sessions queue on a lock, ru: Сессии ждут блокировку}
description: {en: Who holds the lock the checkouts wait for, ru: Кто держит блокировку}
triggers:
  keywords: {en: [lock], ru: [блокиров]}
  min_score: 1
hypotheses:
  - id: lock_queue
    title: {en: checkouts queue on a row lock, ru: заказы ждут блокировку строки}
    prior: 0.5
    checks: [pg_blocking_session]
include: [postgres_sessions]
"""
#: Links of the test's own that loop: the idle holder, then the queue it holds again.
LOOP = """
links:
  - id: idle_first
    after: pg_blocking_session
    when: {datum: blocking_state, matches: '^idle in transaction'}
    because:
      en: "pid {blocking_pid} is idle in its transaction"
      ru: "pid {blocking_pid} простаивает"
    title: {en: a client keeps it idle, ru: клиент держит её}
    checks: [pg_idle_holder]
    unmeasured: {en: not here, ru: не здесь}
  - id: back_to_queue
    after: pg_idle_holder
    when: {datum: blocking_pid, matches: '^[0-9]+$'}
    because: {en: "pid {blocking_pid} holds the queue's lock", ru: "pid {blocking_pid} держит"}
    title: {en: the lock queue again, ru: снова очередь}
    checks: [pg_blocking_session]
    unmeasured: {en: not here, ru: не здесь}
"""


class RecordedSessions:
    """The `pg_sessions` tool's recorded answers: rows a server gave, by query."""

    name = "pg_sessions"

    def __init__(
        self, rows: list[dict[str, Any]], replication: list[dict[str, Any]] | None = None
    ) -> None:
        self._rows = {"blockers": rows, "sync_replication": replication or []}

    async def run(self, request: ToolRequest) -> ToolResult:
        rows = self._rows.get(request.query or "", [])
        return ToolResult(tool=self.name, ok=True, rows=rows, row_count=len(rows))


def recorded_holder(wait_type: str, wait: str) -> list[dict[str, Any]]:
    """A checkout waiting for pid 4242, which is running and waits on `wait_type wait`."""
    return [
        {"waiting_pid": 4300, "waiting_seconds": 2.5,
         "waiting_query": "UPDATE stock SET sold = sold + 1 WHERE id = 1",
         "blocking_pid": 4242, "blocking_state": "active", "blocking_application": "web",
         "blocking_client": "127.0.0.1", "blocking_xact_seconds": 3.1,
         "blocking_query": "COMMIT", "blocking_wait_type": wait_type, "blocking_wait": wait},
    ]  # fmt: skip


#: The lock queue as one alternative of a wider hypothesis (`combine: any`), as the shipped
#: endpoint_probe's `database` has it: the link grows under the alternative that held.
ALTERNATIVES = HEAD.replace(
    "    checks: [pg_blocking_session]",
    "    combine: any\n    checks: [pg_blocking_session, pg_idle_holder]",
)


async def ask(
    pool: asyncpg.Pool[Any], folder: Path, tools: dict[str, Any], *, links: str = "",
    budgets: Budgets | None = None, head: str = HEAD,
) -> tuple[Answer, list[Event]]:  # fmt: skip
    (folder / "lock_queue.yaml").write_text(head + links, encoding="utf-8")
    runbooks = load_runbooks([folder], include_shipped=False)
    assert runbooks.errors == []
    planner = RunbookPlanner(runbooks, tools=tools)
    analyst = DeepAnalyst(
        tree_store=PgTreeStore(pool), planner=planner, tools=tools, budgets=budgets
    )
    question = "why do the checkouts wait on a lock?"
    ctx = PlanningContext(question=question, goal=question, language="en")
    events = [e async for e in analyst.run(ctx, user_id=8, chat_id=8)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    return answer, events


def headline(answer: Answer) -> str:
    text = render_report_text(report_of(answer))  # type: ignore[arg-type]
    return next(line for line in text.splitlines() if line.startswith("Primary cause:"))


async def test_a_disk_wait_that_cannot_be_measured_is_said_and_never_a_firm_cause(
    pool: asyncpg.Pool[Any], tmp_path: Path
) -> None:
    """No Prometheus here: the holder's IO WALSync names the disk, which is not measured."""
    tools = {"pg_sessions": RecordedSessions(recorded_holder("IO", "WALSync"))}
    answer, _ = await ask(pool, tmp_path, tools)
    synthesis = answer.synthesis
    assert synthesis is not None
    assert synthesis.chain_open
    assert synthesis.primary.id == "lock_queue"  # what was established: the effect
    assert synthesis.confidence <= OPEN_LINK_MAX < 0.5  # below 🟡, whatever the queue's p
    assert synthesis.chain[-1] == (
        "the holder waits on its disk (IO WALSync); the disk is not measured here: neither "
        "node_exporter's IO pressure (node_pressure_io_*) nor PostgreSQL's process states "
        "(process-exporter) are read"
    )
    line = headline(answer)
    assert "checkouts queue on a row lock" in line and "confidence low" in line
    assert synthesis.uncertainty_reason is not None
    assert synthesis.uncertainty_reason.startswith("the chain stops at an open link: the holder")


async def test_an_unknown_wait_event_is_named_as_it_is(
    pool: asyncpg.Pool[Any], tmp_path: Path
) -> None:
    tools = {"pg_sessions": RecordedSessions(recorded_holder("Gizmo", "FrobWait"))}
    answer, _ = await ask(pool, tmp_path, tools)
    synthesis = answer.synthesis
    assert synthesis is not None and synthesis.chain_open
    assert synthesis.chain[-1].startswith("the holder waits on Gizmo FrobWait; whytree does not")
    assert synthesis.confidence <= OPEN_LINK_MAX


async def test_an_idle_holder_is_followed_to_its_client(
    pool: asyncpg.Pool[Any], database_url: str, tmp_path: Path
) -> None:
    tools = {"pg_sessions": PgSessionsTool(database_url)}
    async with row_lock_held(database_url):
        answer, _ = await ask(pool, tmp_path, tools)
    synthesis = answer.synthesis
    assert synthesis is not None and not synthesis.chain_open
    assert synthesis.primary.id == "lock_queue>holder_idle_client"
    assert synthesis.chain[1].startswith("the holder is idle in its transaction (pid ")
    assert synthesis.chain[2].startswith(
        "a client keeps its transaction open and idle: the client "
    )
    assert "left its transaction idle with the lock held" in synthesis.chain[2]
    assert synthesis.confidence >= 0.5
    assert "idle_in_transaction_session_timeout" in synthesis.recommendations[0]


async def test_a_chain_that_loops_back_stops_where_it_began(
    pool: asyncpg.Pool[Any], database_url: str, tmp_path: Path
) -> None:
    tools = {"pg_sessions": PgSessionsTool(database_url)}
    async with row_lock_held(database_url):
        answer, events = await ask(pool, tmp_path, tools, links=LOOP)
    synthesis = answer.synthesis
    assert synthesis is not None and not synthesis.chain_open
    # the queue, its idle holder, the queue again, …: a link already in its chain is never
    # grown again (dropped as a loop), so the chain ends, closed, with no link twice
    links = synthesis.primary.id.split(">")
    assert links[0] == "lock_queue" and len(links) >= 3, links
    assert len(set(links)) == len(links), links
    dropped = [e for e in events if getattr(e, "reason", None) == "loops back"]
    assert dropped


async def test_the_chain_stops_at_link_depth_and_says_so(
    pool: asyncpg.Pool[Any], database_url: str, tmp_path: Path
) -> None:
    tools = {"pg_sessions": PgSessionsTool(database_url)}
    async with row_lock_held(database_url):
        answer, _ = await ask(pool, tmp_path, tools, links=LOOP, budgets=Budgets(max_links=1))
    synthesis = answer.synthesis
    assert synthesis is not None and synthesis.chain_open
    assert synthesis.primary.id == "lock_queue>idle_first"  # the deepest link it checked
    assert synthesis.chain[-1].endswith(
        "holds the queue's lock; budget exhausted: the chain stops at its depth limit (1 links)"
    )
    assert synthesis.confidence <= OPEN_LINK_MAX
    text = render_report_text(report_of(answer))  # type: ignore[arg-type]
    assert "Could not check:" in text and "the chain stops at its depth limit (1 links)" in text


async def test_a_link_under_the_alternative_that_held_is_the_chain_of_its_hypothesis(
    pool: asyncpg.Pool[Any], tmp_path: Path
) -> None:
    """A recorded commit waiting for a synchronous standby (IPC SyncRep) and the recorded
    replication row of a server whose named standby is not connected."""
    replication = [{"standby_names": "s2", "synchronous_commit": "on", "standbys": 0,
                    "sync_standbys": 0, "connected": None, "waiting_commits": 4}]  # fmt: skip
    tools = {"pg_sessions": RecordedSessions(recorded_holder("IPC", "SyncRep"), replication)}
    answer, _ = await ask(pool, tmp_path, tools, head=ALTERNATIVES)
    synthesis = answer.synthesis
    assert synthesis is not None and not synthesis.chain_open, synthesis
    assert synthesis.primary.id.endswith(">holder_sync_standby"), synthesis.primary.id
    assert synthesis.chain[-2] == (
        "the holder's commit waits for a synchronous standby (IPC SyncRep)"
    )
    assert "synchronous_standby_names is “s2” but no synchronous standby" in synthesis.chain[-1]
    assert "4 commit(s) wait for one" in synthesis.chain[-1]
    assert synthesis.confidence >= 0.5
