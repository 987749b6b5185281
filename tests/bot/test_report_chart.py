"""The report's chart from the tree's own series: drawn for odd data (gaps, one point, zeros,
negative and huge values, no baseline) or replaced by one line saying why; labels shown as
written; cached per tree version; and the line a terminal prints."""

from __future__ import annotations

import io
import math

import pytest
from PIL import Image

from benchmarks.tree_samples import build_tree, with_symptom
from bot.trees.chart import ChartError, TreeCharts, draw_chart, sparkline
from bot.trees.chart.drawing import safe_text, with_gaps
from reasoning_core.tree.chart_data import ChartData, chart_data
from reasoning_core.tree.symptom import symptom_line


def decoded(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


def data_of(tree_values: list[float], **kwargs: object) -> ChartData:
    tree = with_symptom(build_tree(12), points=max(1, len(tree_values)), **kwargs)  # type: ignore[arg-type]
    for node in tree.nodes.values():
        stored = node.context.get("plan_parameters")
        if stored:
            stored["symptom"]["series"]["v"] = tree_values
    data = chart_data(tree, "en")
    assert isinstance(data, ChartData)
    return data


@pytest.mark.parametrize(
    "values",
    [
        [0.0] * 48,  # all zeros
        [-5.0, 3.0, -1e9, 2.0] * 12,  # negative
        [1e15, 2e15, 3e15, 1e15] * 12,  # huge
        [1.0, math.nan, float("inf"), 2.0] * 12,  # unreadable values become gaps
        [4.2],  # a single point
    ],
    ids=["zeros", "negative", "huge", "non-finite", "single"],
)
def test_odd_series_still_draw(values: list[float]) -> None:
    image = decoded(draw_chart(data_of(values), "en"))
    assert image.format == "PNG" and image.width == 900 and image.height in {360, 520}


def test_gaps_stay_gaps_and_a_tree_without_a_series_says_why() -> None:
    data = chart_data(with_symptom(build_tree(12), gap=True), "ru")
    assert isinstance(data, ChartData)
    times, values = with_gaps(data.symptom.times, data.symptom.values)
    assert sum(1 for v in values if math.isnan(v)) == 1 and len(times) == len(values)
    decoded(draw_chart(data, "ru"))
    assert chart_data(build_tree(12), "en") == "no chart: this analysis measured no time series"
    assert "графика нет" in str(chart_data(build_tree(12), "ru"))


def test_no_baseline_draws_the_recent_window_only() -> None:
    tree = with_symptom(build_tree(12))
    for node in tree.nodes.values():
        if (stored := node.context.get("plan_parameters")) is not None:
            series = stored["symptom"]["series"]
            series["baseline_start"] = series["recent_start"]
    data = chart_data(tree, "en")
    assert isinstance(data, ChartData)
    decoded(draw_chart(data, "en"))


def test_hostile_labels_are_shown_as_written() -> None:
    label = r"$\alpha$ <b>x</b> \n{evil}"
    assert safe_text(label) == r"\$\\alpha\$ <b>x</b> \\n{evil}"
    decoded(draw_chart(data_of([1.0, 2.0] * 30, label=label), "en"))  # no mathtext error


def test_the_symptom_line_names_subject_change_and_window() -> None:
    tree = with_symptom(build_tree(12))
    data = chart_data(tree, "en")
    assert isinstance(data, ChartData)
    assert data.title.startswith("Cell 12345 · traffic index −62% since ")
    assert data.title.endswith("vs the 21 days before")
    ru = symptom_line({"kind": "cell", "subject": "1", "label": "трафик", "change": 0.1,
                       "scale": "relative", "found": False, "direction": "down", "hours": 72,
                       "baseline_hours": 168}, "ru")  # fmt: skip
    assert ru == "Сота 1 · падения не обнаружено: трафик +10% за 72 ч к 7 дням до этого"
    share = symptom_line({"subject": "checkout", "label": "5xx ratio", "change": 0.07,
                          "scale": "absolute", "recent": 0.074, "baseline": 0.003,
                          "onset": "2024-05-01T14:02:00+00:00", "found": True}, "en")  # fmt: skip
    assert share == "checkout · 5xx ratio 7.4% since 1 May 14:02 (usual 0.3%)"
    # "duration" holds the letters of "ratio" but is no share: seconds stay seconds.
    probe = symptom_line({"subject": "http://x/", "label": "probe duration", "value": 3.001,
                          "limit": 1.0}, "en")  # fmt: skip
    assert probe == "http://x/ · probe duration 3 (limit 1)"


async def test_charts_are_cached_per_tree_version() -> None:
    charts = TreeCharts(timeout=30)
    tree = with_symptom(build_tree(12))
    first = await charts.render(tree)
    assert await charts.render(tree) == first and charts.renders == 1
    changed = tree.model_copy(update={"revision": tree.revision + 1})
    await charts.render(changed)
    assert charts.renders == 2
    with pytest.raises(ChartError, match="no time series"):
        await charts.render(build_tree(12))


async def test_a_chart_that_takes_too_long_gives_up_with_a_reason() -> None:
    charts = TreeCharts(timeout=0.000_001)
    with pytest.raises(ChartError, match="longer than"):
        await charts.render(with_symptom(build_tree(12)))


def test_sparkline_for_a_terminal() -> None:
    assert sparkline([0, 1, 2, 3, 4, 5, 6, 7]) == "▁▂▃▄▅▆▇█"
    assert sparkline([1.0, math.nan, 1.0]) == "▁ ▁"
    assert sparkline([]) == ""
