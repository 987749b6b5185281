"""`bench deep` with small numbers: the keys and their arithmetic, not the speed."""

from __future__ import annotations

import pytest

from benchmarks.deep import (
    CRITICAL_ROUNDS,
    MODEL_CALLS,
    PER_CHECK_CALLS,
    format_deep_report,
    run_deep_bench,
)


async def test_bench_deep_reports_its_figures(database_url: str) -> None:
    result = await run_deep_bench(dsn=database_url, latency_ms=5, concurrency=4)
    assert set(result) == {
        "wall_s", "critical_path_s", "ratio", "serial_wall_s", "speedup",
        "speedup_bound", "per_check_serial_s", "speedup_vs_per_check_serial",
    }  # fmt: skip
    # 4 hypotheses x 3 checks: 2H + 2 = 10 model calls now, 1 + H + H x C + 1 = 18 before
    assert (MODEL_CALLS, PER_CHECK_CALLS) == (10, 18)
    assert result["critical_path_s"] == pytest.approx(CRITICAL_ROUNDS * 0.005)
    assert result["wall_s"] >= result["critical_path_s"]
    assert result["serial_wall_s"] >= MODEL_CALLS * 0.005  # one call after another
    assert result["ratio"] == pytest.approx(result["wall_s"] / result["critical_path_s"], rel=0.02)
    assert result["speedup"] == pytest.approx(result["serial_wall_s"] / result["wall_s"], rel=0.02)
    assert result["speedup_bound"] == 2.5
    assert result["per_check_serial_s"] == pytest.approx(PER_CHECK_CALLS * 0.005)
    assert result["speedup_vs_per_check_serial"] == pytest.approx(
        result["per_check_serial_s"] / result["wall_s"], rel=0.02
    )
    text = format_deep_report(result)
    assert "critical path bound" in text and "per-check design" in text and "at most 2.5x" in text
