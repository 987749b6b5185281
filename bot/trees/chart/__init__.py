"""A report's chart: the symptom over its baseline and recent window, the winning evidence
below it (drawn with matplotlib's Agg backend from the series the checks read), cached per
tree version and drawn within a timeout (`TreeCharts`)."""

from bot.trees.chart.charts import ChartError, TreeCharts, chart_filename
from bot.trees.chart.drawing import draw_chart, sparkline

__all__ = ["ChartError", "TreeCharts", "chart_filename", "draw_chart", "sparkline"]
