"""The prometheus tool against a stand-in of Prometheus' HTTP API over real HTTP."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from reasoning_core.tools import Tool, ToolRequest
from reasoning_core.tools.prometheus import PrometheusTool
from tests.fakes.prometheus_server import FakePrometheus

END = datetime(2026, 10, 28, 12, 0, tzinfo=UTC)
START = END - timedelta(hours=1)


@pytest.fixture
async def prom() -> AsyncIterator[FakePrometheus]:
    async with FakePrometheus() as fake:
        yield fake


async def test_instant_vector(prom: FakePrometheus) -> None:
    prom.add("up", {"job": "api", "instance": "a:9100"}, 1)
    prom.add("up", {"job": "db", "instance": "b:9100"}, 0)
    tool: Tool = PrometheusTool(prom.base_url)
    result = await tool.run(ToolRequest(query="up", time=END))
    assert result.ok
    assert result.tool == "prometheus"
    assert result.data["result_type"] == "vector"
    assert result.rows == [
        {"metric": {"job": "api", "instance": "a:9100"}, "ts": END.timestamp(), "value": 1.0},
        {"metric": {"job": "db", "instance": "b:9100"}, "ts": END.timestamp(), "value": 0.0},
    ]
    path, params = prom.requests[-1]
    assert path == "/api/v1/query"
    assert params["query"] == "up"
    assert float(params["time"]) == END.timestamp()
    assert not result.truncated


async def test_range_matrix_with_explicit_and_default_step(prom: FakePrometheus) -> None:
    base = START.timestamp()
    prom.add(
        'rate(http_requests_total{code=~"5.."}[5m])', {"service": "checkout"}, lambda t: t - base
    )
    tool = PrometheusTool(prom.base_url)
    query = 'rate(http_requests_total{code=~"5.."}[5m])'
    result = await tool.run(ToolRequest(query=query, start=START, end=END, step_sec=60))
    assert result.ok
    assert result.data == {"result_type": "matrix", "series": 1, "samples": 61}
    values = result.rows[0]["values"]
    assert len(values) == 61
    assert values[0] == [base, 0.0]
    assert values[-1] == [END.timestamp(), 3600.0]
    assert prom.requests[-1][0] == "/api/v1/query_range"
    default = await tool.run(ToolRequest(query=query, start=START, end=END))
    assert prom.requests[-1][1]["step"] == "15"
    assert len(default.rows[0]["values"]) == 241


async def test_prometheus_errors_become_clear_messages(prom: FakePrometheus) -> None:
    prom.fail("rate(x[5m]", error="1:11: parse error: unclosed left parenthesis")
    prom.fail(
        "sum(huge)",
        error_type="execution",
        error="query processing would load too many samples",
        status=422,
    )
    tool = PrometheusTool(prom.base_url)
    bad = await tool.run(ToolRequest(query="rate(x[5m]"))
    assert not bad.ok
    assert bad.error_kind == "syntax"
    assert bad.error == (
        "Prometheus rejected the query (bad_data): 1:11: parse error: unclosed left parenthesis"
    )
    heavy = await tool.run(ToolRequest(query="sum(huge)"))
    assert heavy.error_kind == "failed"
    assert heavy.error is not None
    assert "execution" in heavy.error
    assert "too many samples" in heavy.error


async def test_sample_limits_truncate_with_a_note(prom: FakePrometheus) -> None:
    for i in range(5):
        prom.add("node_load1", {"instance": f"n{i}"}, float(i))
    tool = PrometheusTool(prom.base_url, max_series=3, max_samples=100)
    few = await tool.run(ToolRequest(query="node_load1"))
    assert few.row_count == 3
    assert few.data["series"] == 5
    assert few.truncated
    assert few.truncation_note == "only the first 3 of 5 series kept"
    many = await tool.run(ToolRequest(query="node_load1", start=START, end=END, step_sec=60))
    assert many.row_count == 3
    assert all(len(r["values"]) == 33 for r in many.rows)
    assert all(r["values"][-1][0] == END.timestamp() for r in many.rows)  # most recent kept
    assert many.truncation_note == (
        "only the first 3 of 5 series kept; 183 samples cut to at most 33 per series"
        " (the most recent kept)"
    )
    assert "183 samples cut" in many.for_prompt()


async def test_timeout_is_bounded(prom: FakePrometheus) -> None:
    prom.delay = 10.0  # the server's shutdown cancels the slow answer at the end
    prom.add("up", {}, 1)
    tool = PrometheusTool(prom.base_url, timeout_sec=0.2)
    started = time.perf_counter()
    result = await tool.run(ToolRequest(query="up"))
    assert time.perf_counter() - started < prom.delay / 2  # cut, well before the answer
    assert not result.ok
    assert result.error_kind == "timeout"
    assert result.error == "Prometheus did not answer within 0.2 s"


async def test_not_a_number_and_missing_query(prom: FakePrometheus) -> None:
    prom.add("ratio", {"job": "x"}, float("nan"))
    tool = PrometheusTool(prom.base_url)
    result = await tool.run(ToolRequest(query="ratio"))
    assert result.rows[0]["value"] is None
    empty = await tool.run(ToolRequest(query="absent_metric"))
    assert empty.ok
    assert empty.rows == []
    missing = await tool.run(ToolRequest())
    assert missing.error_kind == "syntax"


async def test_unreachable_prometheus() -> None:
    async with FakePrometheus() as fake:
        url = fake.base_url
    result = await PrometheusTool(url, timeout_sec=2).run(ToolRequest(query="up"))
    assert not result.ok
    assert result.error_kind == "unavailable"
    assert result.error is not None
    assert result.error.startswith("Prometheus could not be reached")
