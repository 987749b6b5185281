"""`bench deep` with small numbers: the keys and their arithmetic, not the speed."""

from __future__ import annotations

import pytest

from benchmarks.deep import CRITICAL_ROUNDS, format_deep_report, run_deep_bench


async def test_bench_deep_reports_its_figures(database_url: str) -> None:
    result = await run_deep_bench(dsn=database_url, latency_ms=5, concurrency=4)
    assert set(result) == {"wall_s", "critical_path_s", "ratio", "serial_wall_s", "speedup"}
    assert result["critical_path_s"] == pytest.approx(CRITICAL_ROUNDS * 0.005)
    assert result["wall_s"] >= result["critical_path_s"]
    assert result["serial_wall_s"] >= 14 * 0.005  # 14 LLM calls one after another
    assert result["ratio"] == pytest.approx(result["wall_s"] / result["critical_path_s"], rel=0.02)
    assert result["speedup"] == pytest.approx(result["serial_wall_s"] / result["wall_s"], rel=0.02)
    text = format_deep_report(result)
    assert "critical path bound" in text and "speedup" in text
