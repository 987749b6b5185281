"""A target that is down is often an exporter (issue 54): postgres_exporter's target timing
out (up 0, its scrapes at the 10 s timeout) in series served by a real Prometheus, asked
about as its alert is (the target_down runbook, job postgres). With the sessions tool on a
PostgreSQL that answers (the test's own, real), the report names the exporter as the part
that broke; without it, the link stays open and no cause is stated at medium or above.
The node exporter frozen while the other targets on its host answer is the exporter too,
not the host; with every target of the host gone, it is not said to be the exporter."""

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
from reasoning_core.tree.links import OPEN_LINK_MAX
from storage.pg_sessions import PgSessionsTool
from storage.trees import PgTreeStore

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

END = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
RUNBOOKS = load_runbooks()


def series(
    frozen_job: str = "postgres",
    *,
    others: tuple[str, ...] = (),
    all_down: bool = False,
    instance: str = "127.0.0.1:9187",
    timeout: float = 10,
) -> str:
    """30 min of the exporter's scrapes, one each 15 s: answered in 40 ms, then for the last
    2 min timing out (up 0, `timeout` s). `others`: targets of other jobs on the same host,
    up throughout (or gone with it: `all_down`)."""
    start = END - timedelta(minutes=30)
    up, took = [], []
    jobs = [
        (frozen_job, instance),
        *((job, f"127.0.0.1:{9200 + n}") for n, job in enumerate(others)),
    ]
    for job, target in jobs:
        labels = f'instance="{target}",job="{job}"'
        for i in range(121):
            at = (start + timedelta(seconds=15 * i)).timestamp()
            frozen = i >= 113 and (job == frozen_job or all_down)
            up.append(f"up{{{labels}}} {0 if frozen else 1} {at:.0f}")
            took.append(
                f"scrape_duration_seconds{{{labels}}} {timeout if frozen else 0.04} {at:.0f}"
            )
    head = ["# TYPE up gauge", *up, "# TYPE scrape_duration_seconds gauge", *took]
    return "\n".join(head) + "\n# EOF\n"


def _tsdb(factory: pytest.TempPathFactory, name: str, text: str) -> Path:
    folder = factory.mktemp(name)
    (folder / "series.om").write_text(text, encoding="utf-8")
    build_tsdb(folder / "series.om", folder / "tsdb")
    return folder / "tsdb"


@pytest.fixture(scope="module")
def tsdb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield _tsdb(tmp_path_factory, "exporter", series())


@pytest.fixture(scope="module")
def node_tsdbs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    yield {
        "host_up": _tsdb(tmp_path_factory, "node-up", series("node", others=("web", "db"))),
        "probe_host_up": _tsdb(
            tmp_path_factory,
            "blackbox-up",
            series("blackbox", others=("web",), instance="http://127.0.0.1:8080/checkout"),
        ),
        "host_gone": _tsdb(
            tmp_path_factory, "node-gone", series("node", others=("web", "db"), all_down=True)
        ),
    }


async def analyse(
    pool: asyncpg.Pool[Any], tsdb: Path, sessions_dsn: str | None, job: str = "postgres"
) -> Synthesis:
    async with LocalPrometheus(tsdb) as prometheus:
        tools: dict[str, Any] = {"prometheus": PrometheusTool(prometheus.url)}
        if sessions_dsn is not None:
            tools["pg_sessions"] = PgSessionsTool(sessions_dsn)
        planner = RunbookPlanner(RUNBOOKS, tools=tools, clock=lambda: END)
        analyst = DeepAnalyst(tree_store=PgTreeStore(pool), planner=planner, tools=tools)
        question = f"TargetDown: {job}"
        ctx = PlanningContext(
            question=question, goal=question, language="en",
            runbook="target_down", parameters={"job": job},
        )  # fmt: skip
        events = [e async for e in analyst.run(ctx, user_id=10, chat_id=10)]
    answer = answer_of(events[-1])
    assert answer is not None and answer.synthesis is not None, events[-1]
    return answer.synthesis


async def test_postgresql_answering_makes_the_exporter_the_part_that_broke(
    pool: asyncpg.Pool[Any], database_url: str, tsdb: Path
) -> None:
    synthesis = await analyse(pool, tsdb, database_url)
    assert not synthesis.chain_open, synthesis.chain
    assert synthesis.primary.id.split(">")[-1] in {"exporter_down", "exporter_hangs"}
    assert "PostgreSQL's exporter" in synthesis.chain[1], synthesis.chain
    assert synthesis.chain[2].startswith("the exporter"), synthesis.chain
    assert "PostgreSQL itself answers" in synthesis.chain[2]
    assert synthesis.confidence >= 0.5


async def test_without_postgresql_s_own_answer_no_cause_is_stated_firmly(
    pool: asyncpg.Pool[Any], tsdb: Path
) -> None:
    synthesis = await analyse(pool, tsdb, None)
    assert synthesis.chain_open, synthesis.chain
    assert "whether PostgreSQL itself answers is not established" in synthesis.chain[-1]
    assert synthesis.confidence <= OPEN_LINK_MAX


@pytest.mark.parametrize(
    ("recording", "job"),
    [("host_up", "node"), ("probe_host_up", "blackbox")],
    ids=["node-exporter", "blackbox-url-target"],
)
async def test_a_frozen_exporter_on_a_host_that_answers_is_the_exporter(
    pool: asyncpg.Pool[Any], node_tsdbs: dict[str, Path], recording: str, job: str
) -> None:
    """node_exporter, and blackbox_exporter whose target's instance is the probed URL (its
    host read out of it): the other targets on the host answer, so the exporter broke."""
    synthesis = await analyse(pool, node_tsdbs[recording], None, job=job)
    assert synthesis.primary.id.split(">")[-1] == "exporter_hangs_host_up", synthesis.chain
    assert not synthesis.chain_open, synthesis.chain
    assert synthesis.chain[-1].startswith(f"the exporter itself hangs (job {job})"), (
        synthesis.chain
    )
    assert "the other targets on its host up" in synthesis.chain[-1], synthesis.chain


async def test_a_host_whose_every_target_is_gone_is_not_said_to_be_its_exporter(
    pool: asyncpg.Pool[Any], node_tsdbs: dict[str, Path]
) -> None:
    synthesis = await analyse(pool, node_tsdbs["host_gone"], None, job="node")
    assert synthesis.primary.id.split(">")[-1] != "exporter_hangs_host_up", synthesis.chain
    # the link is said as refuted, and the effect is not stated firmly
    assert "not confirmed that the exporter itself hangs" in synthesis.primary.title
    assert synthesis.confidence < 0.5
