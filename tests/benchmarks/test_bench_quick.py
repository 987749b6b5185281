"""`bench quick` with small numbers: its keys and what they must satisfy, not the speed."""

from __future__ import annotations

import pytest

from benchmarks.quick import format_quick_report, run_quick_bench

pytestmark = pytest.mark.slow

KEYS = {
    "chats", "questions_per_chat", "whytree_msgs_per_s", "bare_msgs_per_s", "ratio",
    "whytree_p50_ms", "whytree_p95_ms", "bare_p50_ms", "bare_p95_ms",
    "whytree_first_token_p50_ms", "bare_first_token_p50_ms", "latency_ratio_p50",
}  # fmt: skip


async def test_bench_quick_reports_both_bots_with_a_slow_streaming_model() -> None:
    latency_ms = 150.0
    result = await run_quick_bench(chats=3, questions=2, llm_latency_ms=latency_ms)
    assert set(result) == KEYS
    assert (result["chats"], result["questions_per_chat"]) == (3, 2)
    for bot in ("whytree", "bare"):
        # every question was answered after the model's wait, the first words before the end
        assert result[f"{bot}_first_token_p50_ms"] >= latency_ms
        assert result[f"{bot}_p50_ms"] >= result[f"{bot}_first_token_p50_ms"]
        assert result[f"{bot}_p95_ms"] >= result[f"{bot}_p50_ms"]
        assert result[f"{bot}_msgs_per_s"] > 0
    expected = result["whytree_msgs_per_s"] / result["bare_msgs_per_s"]
    assert result["ratio"] == pytest.approx(expected, rel=0.05)  # (of unrounded rates)
    expected = result["whytree_p50_ms"] / result["bare_p50_ms"]
    assert result["latency_ratio_p50"] == pytest.approx(expected, rel=0.01)
    report = format_quick_report(result)
    assert "1st tok ms" in report and str(result["whytree_first_token_p50_ms"]) in report
