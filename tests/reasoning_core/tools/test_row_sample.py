"""sample_rows: the first rows a check saw, as text cells, kept on its evidence."""

from __future__ import annotations

from datetime import date

from reasoning_core.tools.base import SAMPLE_CELL_CHARS, ToolResult, sample_rows


def test_columns_in_order_of_first_appearance_and_cells_as_text() -> None:
    result = ToolResult(
        tool="sql",
        ok=True,
        rows=[{"day": date(2024, 5, 6), "v": 1.5}, {"v": None, "extra": {"a": [1, 2]}}],
        row_count=2,
    )
    sample = sample_rows(result)
    assert sample.columns == ["day", "v", "extra"]
    assert sample.rows == [["2024-05-06", "1.5", ""], ["", "NULL", '{"a": [1, 2]}']]
    assert sample.row_count == 2 and not sample.truncated


def test_long_results_are_cut_and_say_so() -> None:
    rows = [{"n": i, "text": "x" * 1000} for i in range(50)]
    sample = sample_rows(ToolResult(tool="sql", ok=True, rows=rows, row_count=50), max_rows=5)
    assert len(sample.rows) == 5 and sample.truncated and sample.row_count == 50
    assert len(sample.rows[0][1]) == SAMPLE_CELL_CHARS and sample.rows[0][1].endswith("…")
