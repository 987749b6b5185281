"""`bench memory` with tiny sizes: the documented keys, and the figures it stands for."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from benchmarks.memory import format_memory_report, recall_at_3, run_memory_bench
from benchmarks.memory_analysis import scripted_analysis

KEYS = {
    "p50_ms",
    "p95_ms",
    "p95_ratio_1m_10k",
    "recall_at_3",
    "max_prompt_tokens",
    "budget_tokens",
    "token_ratio_vs_full_history",
}


async def test_bench_returns_the_documented_keys(pg_server_dsn: str) -> None:
    result = await run_memory_bench(pg_server_dsn, sizes=(500, 1000, 2000), queries=20)
    assert set(result) == KEYS
    assert set(result["p50_ms"]) == set(result["p95_ms"]) == {"10k", "100k", "1m"}
    assert all(v > 0 for v in result["p95_ms"].values())
    assert result["budget_tokens"] == 4000
    assert 0 < result["max_prompt_tokens"] <= 4000
    assert 0 < result["token_ratio_vs_full_history"] <= 0.5
    assert result["recall_at_3"] >= 0.8
    report = format_memory_report(result)
    assert "recall@3" in report and "p95(1m)/p95(10k)" in report
    # The scratch database is gone.
    conn = await asyncpg.connect(pg_server_dsn)
    try:
        left = await conn.fetchval(
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'whytree_bench_memory_%'"
        )
    finally:
        await conn.close()
    assert left == 0


async def test_recall_set_is_large_enough_and_scored(pool: asyncpg.Pool[Any]) -> None:
    score = await recall_at_3(pool)
    assert 0.8 <= score <= 1.0
    count = await pool.fetchval("SELECT count(*) FROM memories WHERE user_id = 0")
    assert count >= 40


def test_scripted_analysis_stays_in_budget_and_saves_half() -> None:
    figures = scripted_analysis(steps=30, budget_tokens=4000)
    assert figures.max_prompt_tokens <= 4000 - 800
    assert figures.ratio <= 0.5
    assert figures.full_total > 30 * 4000, "the baseline really outgrows the budget"


def test_sizes_must_be_three_growing_counts() -> None:
    with pytest.raises(ValueError, match="three growing"):
        run_memory_bench("postgresql://unused", sizes=(10, 5, 20)).send(None)
